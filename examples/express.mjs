// foyer with Express 5: the same lines as with morgan and body-parser, other package names.
import express from 'express'
import logger from 'foyer/logger'
import bodyParser from 'foyer/body'

const app = express()
app.use(logger('dev'))

// Mount each parser on the routes that need it.
app.post('/api/items', bodyParser.json(), (req, res) => {
  res.json({ item: req.body })
})
app.post('/login', bodyParser.urlencoded({ extended: false }), (req, res) => {
  // req.body is undefined when nothing was parsed (no body, another content type)
  res.type('text').send(`hello ${String(req.body?.user ?? 'nobody')}\n`)
})

// Parser errors carry an HTTP status and a machine-readable `type`.
app.use((err, req, res, next) => {
  res.status(err.status ?? 500).json({ type: err.type ?? 'internal' })
})

const server = app.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`)
})
