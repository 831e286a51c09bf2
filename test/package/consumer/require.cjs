// A CommonJS consumer of the packed package: every entry point, the drop-in shapes.
'use strict'
const assert = require('node:assert/strict')

const foyer = require('foyer')
for (const name of ['logger', 'json', 'raw', 'text', 'urlencoded']) {
  assert.equal(typeof foyer[name], 'function', `foyer.${name}`)
}

// require('foyer/logger') replaces require('morgan'): the callable itself.
const logger = require('foyer/logger')
assert.equal(typeof logger, 'function')
assert.equal(logger, foyer.logger)
for (const name of ['token', 'format', 'compile']) assert.equal(typeof logger[name], 'function', `logger.${name}`)
assert.equal(typeof logger('tiny', { stream: { write () {} } }), 'function')
// taken off the function, as morgan's can be, they work called on their own
const { token, format, compile } = require('foyer/logger')
assert.equal(token('required-alone', () => 'alone'), logger)
assert.equal(format('required-alone', ':required-alone'), logger)
assert.equal(compile('[:required-alone]')(logger, {}, {}), '[alone]')

// require('foyer/body') replaces require('body-parser'): an object of the four parsers, on which
// one can be wrapped or stubbed (as instrumentation and test doubles do).
const body = require('foyer/body')
assert.deepEqual(Object.keys(body).sort(), ['json', 'raw', 'text', 'urlencoded'])
for (const name of ['json', 'raw', 'text', 'urlencoded']) {
  assert.equal(body[name], foyer[name], `body.${name}`)
  assert.equal(typeof body[name](), 'function')
}
const original = body.json
const wrapped = (options) => original(options)
body.json = wrapped
assert.equal(require('foyer/body').json, wrapped)
body.json = original
console.log('require: ok')
