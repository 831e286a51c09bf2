// The demo server of `npm start`: the dev logger and all four parsers in front of a handler
// that answers with what was parsed. Errors are answered with their status and `type`.
//
//   PORT=3000 node examples/demo.mjs
import { createServer } from 'node:http'
import { json, logger, raw, text, urlencoded } from 'foyer'

const parsers = [
  ['json', json()],
  ['urlencoded', urlencoded({ extended: true })],
  ['text', text()],
  ['raw', raw()]
]
const log = logger('dev')

function describe (body) {
  return Buffer.isBuffer(body) ? { base64: body.toString('base64'), bytes: body.length } : body
}

function send (res, status, payload) {
  const data = JSON.stringify(payload, null, 2) + '\n'
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(data) })
  res.end(data)
}

function onError (err, res) {
  const status = Number.isInteger(err.status) ? err.status : 500
  send(res, status, { error: { status, type: err.type ?? 'internal', message: err.expose ? err.message : 'Internal Server Error' } })
}

// Runs the logger, then each parser in turn (as app.use() would), noting which one set req.body.
function handle (req, res) {
  let matched = null
  let i = 0
  const next = (err) => {
    if (err) return onError(err, res)
    if (matched === null && req.body !== undefined && i > 0) matched = parsers[i - 1][0]
    const entry = parsers[i++]
    if (entry !== undefined) return entry[1](req, res, next)
    send(res, 200, { method: req.method, url: req.url, parser: matched, body: describe(req.body) ?? null })
  }
  log(req, res, next)
}

const port = Number(process.env.PORT ?? 3000)
const server = createServer(handle)
server.listen(port, '127.0.0.1', () => {
  console.log(`foyer demo listening on http://127.0.0.1:${server.address().port}`)
})
