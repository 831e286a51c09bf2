// foyer with plain node:http: call the middlewares yourself, each one's `next` running the following.
import { createServer } from 'node:http'
import { json, logger } from 'foyer'

const log = logger('combined')
const parseJson = json({ limit: '1mb' })

const server = createServer((req, res) => {
  log(req, res, () => {
    parseJson(req, res, (err) => {
      if (err) {
        res.statusCode = err.status ?? 500
        res.end(`${err.type ?? 'error'}\n`)
        return
      }
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify({ received: req.body ?? null }))
    })
  })
})

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`)
})
