// Token values are escaped for a one-line log exactly as morgan 1.12 escapes them, so no
// header, URL or user name can end a line early, forge another, or drive a terminal.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import type { IncomingMessage, ServerResponse } from 'node:http'
import fc from 'fast-check'
import { logger } from '../../src/index.js'
import type { TokenIndexer } from '../../src/index.js'
import { escapeLogField } from '../../src/logger/escape.js'
import { answer, compareWithMorgan, LineCollector, morgan, serve } from '../helpers/logger-lines.js'
import { rawRequest, request } from '../helpers/server.js'

// eslint-disable-next-line no-control-regex -- the characters a line must never hold raw
const RAW_CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/

const basic = (user: string): string => 'Basic ' + Buffer.from(`${user}:pw`, 'utf8').toString('base64')

describe('escaping a value', () => {
  it('uses the short escapes for backspace, form feed, newline, carriage return and tab', () => {
    assert.equal(escapeLogField('\b\f\n\r\t'), '\\b\\f\\n\\r\\t')
  })

  it('escapes the quote and the backslash', () => {
    assert.equal(escapeLogField('say "hi" \\o/'), 'say \\"hi\\" \\\\o/')
  })

  it('writes other C0 and C1 controls, DEL and the line separators as \\u with four lower-case hex digits', () => {
    assert.equal(escapeLogField('\u0000\u0001\u001b[31m\u001f'), '\\u0000\\u0001\\u001b[31m\\u001f')
    assert.equal(escapeLogField('\u007f\u0080\u009b\u009f'), '\\u007f\\u0080\\u009b\\u009f')
    assert.equal(escapeLogField('a\u2028b\u2029c'), 'a\\u2028b\\u2029c')
  })

  it('leaves everything else alone: printable ASCII, Latin-1 letters, other scripts, emoji', () => {
    const text = "plain ASCII !#$%&'()*+,-./:;<=>?@[]^_`{|}~ \u00a0\u00e9\u00ff \u4e2d\u6587 \u{1f600}"
    assert.equal(escapeLogField(text), text)
  })

  it('escapes every code unit exactly as morgan does', () => {
    // A morgan token returning each code unit in turn, against foyer's token.
    const req = {} as IncomingMessage
    const res = {} as ServerResponse
    let unit = ''
    logger.token('unit', () => unit)
    morgan.token('unit', () => unit)
    const ours = logger.compile(':unit')
    const theirs = morgan.compile(':unit')
    const tokens = logger as unknown as TokenIndexer
    for (let code = 0; code <= 0xffff; code++) {
      unit = 'a' + String.fromCharCode(code) + 'b'
      const expected = theirs(morgan, req, res)
      if (ours(tokens, req, res) !== expected) assert.fail(`U+${code.toString(16)}: ${JSON.stringify(ours(tokens, req, res))} is not ${JSON.stringify(expected)}`)
    }
  })

  it('is the identity on safe text and never leaves a raw control character (property)', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 50 }), (value) => {
      const escaped = escapeLogField(value)
      assert.doesNotMatch(escaped, RAW_CONTROL)
      // unescaping as JSON gives the value back
      assert.equal(JSON.parse(`"${escaped}"`), value)
    }), { numRuns: 1000 })
  })
})

describe('hostile requests', () => {
  // insecureHTTPParser lets raw control characters in header values reach the logger, as a
  // lenient proxy in front of the server might.
  const serverOptions = { insecureHTTPParser: true }
  const send = (head: string) => async (port: number) => await rawRequest(port, Buffer.from(head, 'latin1'))

  it('cannot forge a line or colour a terminal through a header', async () => {
    const { ours, theirs } = await compareWithMorgan(':user-agent :req[x-note]', send(
      'GET / HTTP/1.1\r\nHost: x\r\nUser-Agent: ua\x1b[2J\x07"\\\r\nX-Note: a\x0bb\x00c\x7fd\x9be\r\nConnection: close\r\n\r\n'
    ), { serverOptions })
    assert.equal(ours, theirs)
    assert.equal(ours, 'ua\\u001b[2J\\u0007\\"\\\\ a\\u000bb\\u0000c\\u007fd\\u009be')
    assert.doesNotMatch(ours, RAW_CONTROL)
  })

  it('cannot end the line through a Basic-auth user name', async () => {
    // (a user name ends at the first colon)
    const forged = 'ada\n10.0.0.1 - admin [01/Jan/2000] "GET /admin HTTP/1.1" 200 -'
    const { ours, theirs } = await compareWithMorgan('combined', send(
      `GET / HTTP/1.1\r\nHost: x\r\nAuthorization: ${basic(forged)}\r\nConnection: close\r\n\r\n`
    ))
    assert.equal(ours, theirs)
    assert.ok(!ours.includes('\n'), ours)
    assert.match(ours, /^127\.0\.0\.1 - ada\\n10\.0\.0\.1 - admin \[01\/Jan\/2000\] \\"GET \/admin HTTP\/1\.1\\" 200 - \[/)
  })

  it('escapes a user name with terminal sequences and line separators', async () => {
    const { ours, theirs } = await compareWithMorgan(':remote-user', send(
      `GET / HTTP/1.1\r\nHost: x\r\nAuthorization: ${basic('\u001b]0;owned\u0007\u2028x\u0085')}\r\nConnection: close\r\n\r\n`
    ))
    assert.equal(ours, theirs)
    assert.equal(ours, '\\u001b]0;owned\\u0007\\u2028x\\u0085')
  })

  it('escapes quotes and backslashes in the URL so the quoted request field stays whole', async () => {
    const { ours, theirs } = await compareWithMorgan('combined', send('GET /a"b\\c HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'))
    assert.equal(ours, theirs)
    assert.match(ours, /"GET \/a\\"b\\\\c HTTP\/1\.1"/)
  })

  it('escapes the text of an array or object a token returns, which morgan writes raw; a format function still gets the value itself', async () => {
    // as a token written in JavaScript may return them; the types ask for a string
    const anyValue = (value: unknown): string => value as string
    logger.token('cookies', (req) => anyValue(req.headers['set-cookie']))
    logger.token('note', () => anyValue({ toString: () => 'a"\nb' }))
    logger.token('nothing', () => anyValue([]))
    // made into text as morgan's `+` does: valueOf first (a moment, a luxon DateTime)
    logger.token('when', () => anyValue({ valueOf: () => 1700000000000, toString: () => 'not this' }))
    const head = 'GET / HTTP/1.1\r\nHost: x\r\nSet-Cookie: a" "forged\\\r\nSet-Cookie: b\x0bc\r\nConnection: close\r\n\r\n'
    const collector = new LineCollector()
    let seen: unknown
    const server = await serve([
      logger(':method ":cookies" :note [:nothing] :when :status', { stream: collector }),
      logger((tokens, req, res) => { seen = tokens.cookies?.(req, res); return '' }, { stream: new LineCollector() })
    ], answer(), serverOptions)
    try {
      await send(head)(server.port)
      const [line] = await collector.waitForLines(1)
      assert.equal(line, 'GET "a\\" \\"forged\\\\,b\\u000bc" a\\"\\nb [] 1700000000000 200')
      assert.deepEqual(seen, ['a" "forged\\', 'b\x0bc'])
    } finally {
      await server.close()
    }
  })

  it('checks every value, whatever the same token gave before (clean, escaped, same length)', async () => {
    // Each value equals the one the token gave before, or differs from it by one character.
    const agents = ['agent-1.0', 'agent-1.1', 'agent"1.0', 'agent"1.0', 'agent-1.0', 'agent\\1.0', 'agent\u00851.0', 'agent\u00851.0', 'agent-1.0', 'agent-1.0x']
    const collector = new LineCollector()
    const server = await serve([logger(':user-agent :req[x-same]', { stream: collector })], answer())
    try {
      for (const agent of agents) await request(server.port, { headers: { 'user-agent': agent, 'x-same': agent } })
      const lines = await collector.waitForLines(agents.length)
      assert.deepEqual(lines, agents.map((agent) => `${escapeLogField(agent)} ${escapeLogField(agent)}`))
      assert.deepEqual(lines.slice(2, 8), ['agent\\"1.0 agent\\"1.0', 'agent\\"1.0 agent\\"1.0', 'agent-1.0 agent-1.0', 'agent\\\\1.0 agent\\\\1.0', 'agent\\u00851.0 agent\\u00851.0', 'agent\\u00851.0 agent\\u00851.0'])
    } finally {
      await server.close()
    }
  })

  it('writes one line per request with no raw control character for any user name and header (property)', async () => {
    const user = fc.string({ unit: 'binary', maxLength: 30 }).filter((u) => !u.includes(':'))
    // header bytes a lenient parser passes on: anything but CR, LF and NUL
    const value = fc.array(fc.integer({ min: 1, max: 255 }).filter((b) => b !== 10 && b !== 13), { maxLength: 30 })
      .map((bytes) => Buffer.from(bytes).toString('latin1').trim())
    await fc.assert(fc.asyncProperty(user, value, async (name, header) => {
      const { ours, theirs } = await compareWithMorgan(':remote-user ":req[x-value]" ":user-agent"', send(
        `GET / HTTP/1.1\r\nHost: x\r\nAuthorization: ${basic(name)}\r\nX-Value: ${header}\r\nUser-Agent: ${header}\r\nConnection: close\r\n\r\n`
      ), { serverOptions })
      assert.equal(ours, theirs)
      assert.doesNotMatch(ours, RAW_CONTROL)
    }), { numRuns: 40 })
  })
})
