// Structured access logs: the `json` format, a custom `logger.json()` spec, and `:res-bytes`
// (the body bytes actually sent, even for a streamed response without Content-Length).
import { createServer } from 'node:http'
import { Readable } from 'node:stream'
import { logger } from 'foyer'

logger.token('tenant', (req) => req.headers['x-tenant'])

const standard = logger('json')
const custom = logger(logger.json({
  at: ':date[iso]',
  request: ':method :url',
  status: ':status',
  ms: ':response-time[1]',
  bytes: ':res-bytes',
  tenant: ':tenant'
}))

const server = createServer((req, res) => {
  standard(req, res, () => {
    custom(req, res, () => {
      res.setHeader('content-type', 'text/plain')
      // streamed: no Content-Length, so only :res-bytes can say how much was sent
      Readable.from(['hello ', 'from ', 'a stream\n']).pipe(res)
    })
  })
})

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`)
})
