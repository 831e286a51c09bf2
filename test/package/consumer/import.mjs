// An ESM consumer of the packed package. `import` and `require` must share one module graph:
// a token registered through one is used when logging through the other.
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { createRequire } from 'node:module'
import * as foyer from 'foyer'
import logger, { compile, format, json as jsonFormat, token } from 'foyer/logger'
import * as loggerModule from 'foyer/logger'
import body, { json, raw, text, urlencoded } from 'foyer/body'
import * as bodyModule from 'foyer/body'

const require = createRequire(import.meta.url)

assert.deepEqual(Object.keys(foyer).sort(), ['json', 'logger', 'raw', 'readJson', 'readRaw', 'readText', 'readUrlencoded', 'text', 'urlencoded'])
assert.equal(logger, require('foyer/logger'))
assert.equal(foyer.logger, logger)
assert.equal(body, require('foyer/body'))
assert.deepEqual([json, raw, text, urlencoded], [body.json, body.raw, body.text, body.urlencoded])
assert.equal(json, require('foyer').json)

// morgan's named exports, and foyer's json, also through `import * as`; they work called on their own.
// (and 'module.exports', what require(esm) gives, which node also lists for morgan and
// body-parser from Node.js 24)
assert.deepEqual(Object.keys(loggerModule).sort(), ['compile', 'default', 'format', 'json', 'module.exports', 'token'])
assert.equal(loggerModule['module.exports'], logger)
assert.equal(jsonFormat, logger.json)
assert.equal(jsonFormat({ m: ':method' })(logger, { method: 'GET', headers: {} }, {}), '{"m":"GET"}')
assert.deepEqual(Object.keys(bodyModule).sort(), ['default', 'json', 'module.exports', 'raw', 'text', 'urlencoded'])
assert.equal(bodyModule['module.exports'], body)
assert.deepEqual([token, format, compile], [logger.token, logger.format, logger.compile])
assert.deepEqual([loggerModule.token, loggerModule.format, loggerModule.compile], [token, format, compile])
assert.equal(token('imported-alone', () => 'alone'), logger)
assert.equal(format('imported-alone', ':imported-alone'), logger)
// called through the namespace, they return the logger, not the namespace, so a chain goes on
assert.equal(loggerModule.token('through-namespace', () => 'namespace'), logger)
assert.equal(loggerModule.format('through-namespace', ':through-namespace'), logger)
assert.equal(compile('[:imported-alone]')(logger, {}, {}), '[alone]')
assert.equal(require('foyer/logger').compile(':imported-alone')(logger, {}, {}), 'alone')

require('foyer/logger').token('registered-by-require', () => 'seen-by-import')
logger.format('format-by-require', ':registered-by-require')
const line = logger.compile(':registered-by-require')(logger, {}, {})
assert.equal(line, 'seen-by-import')

const lines = []
const mw = logger('format-by-require', { stream: { write (l) { lines.push(l) } } })
const server = createServer((req, res) => mw(req, res, () => res.end('ok')))
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve))
const reply = await fetch(`http://127.0.0.1:${server.address().port}/`)
assert.equal(await reply.text(), 'ok')
server.closeAllConnections()
server.close()
await new Promise((resolve) => setTimeout(resolve, 50))
assert.deepEqual(lines, ['seen-by-import\n'])
console.log('import: ok')
