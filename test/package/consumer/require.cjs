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

// require('foyer/body') replaces require('body-parser').
const body = require('foyer/body')
for (const name of ['json', 'raw', 'text', 'urlencoded']) {
  assert.equal(body[name], foyer[name], `body.${name}`)
  assert.equal(typeof body[name](), 'function')
}
console.log('require: ok')
