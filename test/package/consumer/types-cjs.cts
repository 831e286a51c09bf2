// Type-level drop-in check for CommonJS consumers: the morgan and body-parser idioms compile.
import logger = require('foyer/logger')
import bodyParser = require('foyer/body')
import foyer = require('foyer')
import { createServer } from 'node:http'
import type { IncomingMessage, ServerResponse } from 'node:http'

type Mw = (req: IncomingMessage, res: ServerResponse, next: (err?: unknown) => void) => void

logger.token('id', (req: IncomingMessage) => String(req.headers['x-id']))
const combined: Mw = logger('combined', { skip: (_req, res) => res.statusCode < 400 })
const parsers: Mw[] = [
  bodyParser.json({ limit: '1mb', strict: false }),
  bodyParser.urlencoded({ extended: true, parameterLimit: 10 }),
  bodyParser.text({ type: 'text/*' }),
  bodyParser.raw({ type: () => true }),
  foyer.json()
]

// The README's node:http example: the error a parser passes to next has `status` and `type`.
const parseJson = bodyParser.json({ limit: '1mb' })
const server = createServer((req, res) => {
  parseJson(req, res, (err) => {
    if (err) {
      res.statusCode = err.status ?? 500
      res.end(`${err.type}\n`)
      return
    }
    res.end('ok')
  })
})
function answer (res: ServerResponse, err: foyer.BodyError): void {
  res.statusCode = err.statusCode
  res.end(err.type)
}

export { answer, combined, parsers, server }
