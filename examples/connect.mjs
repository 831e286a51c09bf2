// foyer with Connect.
import connect from 'connect'
import logger from 'foyer/logger'
import { text, urlencoded } from 'foyer/body'

const app = connect()
app.use(logger('short'))
app.use(urlencoded({ extended: true }))
app.use(text({ type: 'text/*' }))
app.use((req, res) => {
  res.setHeader('content-type', 'application/json')
  res.end(JSON.stringify({ body: req.body ?? null }))
})
app.use((err, req, res, next) => {
  res.statusCode = err.status ?? 500
  res.end(`${err.type ?? 'error'}\n`)
})

const server = app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`)
})
