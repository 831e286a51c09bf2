import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import bodyParser from 'body-parser'
import createError from 'http-errors'
import iconv from 'iconv-lite'
import { json } from '../../src/body/index.js'
import { compare, send, startBodyServer } from '../helpers/body-server.js'
import type { BodyServer } from '../helpers/body-server.js'

const JSON_HEADERS = { 'content-type': 'application/json' }

let server: BodyServer
before(async () => { server = await startBodyServer() })
after(async () => { await server.close() })

describe('json()', () => {
  it('parses an object into req.body', async () => {
    const seen = await compare(server, json(), bodyParser.json(), { headers: JSON_HEADERS, body: '{"user":"tobi","n":[1,2]}' })
    assert.deepEqual(seen.body, { user: 'tobi', n: [1, 2] })
  })

  it('parses an array', async () => {
    const seen = await compare(server, json(), bodyParser.json(), { headers: JSON_HEADERS, body: ' [1, "2", null]' })
    assert.deepEqual(seen.body, [1, '2', null])
  })

  it('gives {} for an empty body', async () => {
    const seen = await compare(server, json(), bodyParser.json(), { headers: { ...JSON_HEADERS, 'content-length': '0' }, body: '' })
    assert.deepEqual(seen.body, {})
  })

  it('gives a 400 entity.parse.failed with JSON.parse\'s own message for invalid JSON', async () => {
    for (const body of ['{"a":', '{a:1}', '[1,]', "{'a':1}", '{"a":1}}', '{"a":"\u0001"}', '[' + '1,'.repeat(300) + 'x]']) {
      const seen = await compare(server, json(), bodyParser.json(), { headers: JSON_HEADERS, body })
      assert.equal(seen.error?.type, 'entity.parse.failed')
      assert.equal(seen.error?.status, 400)
      assert.equal(seen.error?.name, 'SyntaxError')
      assert.deepEqual(seen.error?.props, { body })
      assert.equal(seen.error?.message, syntaxMessage(body))
    }
  })

  it('keeps the parsed body out of req.body when parsing fails', async () => {
    const path = server.mount(json(), (req) => { (req as unknown as { body: unknown }).body = 'before' })
    const seen = await send(server, path, { headers: JSON_HEADERS, body: '{' })
    assert.equal(seen.error?.type, 'entity.parse.failed')
  })

  it('accepts a utf-8 byte order mark', async () => {
    const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"bom":true}')])
    const seen = await compare(server, json(), bodyParser.json(), { headers: JSON_HEADERS, body })
    assert.deepEqual(seen.body, { bom: true })
  })

  it('keeps invalid utf-8 as replacement characters, like body-parser', async () => {
    const body = Buffer.concat([Buffer.from('{"a":"'), Buffer.from([0xc3, 0x28, 0xff, 0xed, 0xa0, 0x80]), Buffer.from('"}')])
    await compare(server, json(), bodyParser.json(), { headers: JSON_HEADERS, body })
  })
})

describe('json() strict', () => {
  for (const body of ['1', ' true', '"x"', 'null', '\n\t 12', '#', ' x', 'undefined', '   ', ' \ufeff{}']) {
    it(`refuses ${JSON.stringify(body)} by default with the message JSON.parse gives for that character`, async () => {
      const seen = await compare(server, json(), bodyParser.json(), { headers: JSON_HEADERS, body })
      assert.equal(seen.error?.type, 'entity.parse.failed')
      assert.equal(seen.error?.status, 400)
      assert.equal(seen.error?.name, 'SyntaxError')
    })
  }

  it('gives the masked-input message body-parser gives', async () => {
    const seen = await send(server, server.mount(json()), { headers: JSON_HEADERS, body: ' true' })
    assert.equal(seen.error?.message, syntaxMessage(' ####').replace(/#+/g, (run) => ' true'.slice(1, 1 + run.length)))
  })

  it('accepts any JSON value when strict is false', async () => {
    for (const [body, value] of [['1', 1], [' "x"', 'x'], ['null', null], ['true', true]] as const) {
      const seen = await compare(server, json({ strict: false }), bodyParser.json({ strict: false }), { headers: JSON_HEADERS, body })
      assert.deepEqual(seen.body, value)
    }
  })

  it('still refuses invalid JSON when strict is false', async () => {
    const seen = await compare(server, json({ strict: false }), bodyParser.json({ strict: false }), { headers: JSON_HEADERS, body: 'tru' })
    assert.equal(seen.error?.type, 'entity.parse.failed')
  })
})

describe('json() reviver', () => {
  it('is passed to JSON.parse', async () => {
    const reviver = (key: string, value: unknown): unknown => key === 'n' ? Number(value) * 2 : value
    const seen = await compare(server, json({ reviver }), bodyParser.json({ reviver }), { headers: JSON_HEADERS, body: '{"n":21,"s":"x"}' })
    assert.deepEqual(seen.body, { n: 42, s: 'x' })
  })

  it('a throwing reviver gives a 400 entity.parse.failed', async () => {
    const reviver = (): unknown => { throw new Error('no thanks') }
    const seen = await compare(server, json({ reviver }), bodyParser.json({ reviver }), { headers: JSON_HEADERS, body: '{"a":1}' })
    assert.equal(seen.error?.message, 'no thanks')
  })

  it('an error the reviver throws keeps only its message: its own status, type and properties are dropped', async () => {
    const reviver = (): unknown => { throw Object.assign(new RangeError('bad date'), { status: 422, type: 'custom.type', code: 'X', field: 'at' }) }
    const seen = await compare(server, json({ reviver }), bodyParser.json({ reviver }), { headers: JSON_HEADERS, body: '{"a":1}' })
    assert.equal(seen.error?.status, 400)
    assert.equal(seen.error?.type, 'entity.parse.failed')
    assert.equal(seen.error?.message, 'bad date')
  })

  it('a syntax error\'s stack starts with its message for a body starting with $, refused by strict or by JSON.parse (README: body-parser reads `$\'` in it as a pattern)', async () => {
    for (const [options, body] of [[{}, '$x'], [{}, '$\'$&'], [{ strict: false }, '$x'], [{}, '{"a":$x}']] as const) {
      const seen = await send(server, server.mount(json(options)), { headers: JSON_HEADERS, body })
      assert.equal(seen.error?.type, 'entity.parse.failed', body)
      assert.match(seen.error?.message ?? '', /\$/, body)
      assert.equal(seen.error?.stackHead, `SyntaxError: ${seen.error?.message ?? ''}`, body)
    }
  })

  it('an error the reviver throws keeps the stack it was made with: its first line names the error as it was thrown, before its own name was dropped', async () => {
    class ValidationError extends Error {
      constructor (message: string) { super(message); this.name = 'ValidationError' }
    }
    const throwing: Array<[() => Error, string]> = [
      [() => new ValidationError('age must be >= 0'), 'ValidationError: age must be >= 0'],
      [() => createError(422, 'bad age'), 'UnprocessableEntityError: bad age'],
      [() => Object.assign(new Error('named'), { name: 'Custom' }), 'Custom: named']
    ]
    for (const [make, head] of throwing) {
      const reviver = (key: string, value: unknown): unknown => { if (key === 'age') throw make(); return value }
      const seen = await compare(server, json({ reviver }), bodyParser.json({ reviver }), { headers: JSON_HEADERS, body: '{"age":-1}' })
      assert.equal(seen.error?.stackHead, head)
    }
  })

  it('an error the reviver throws whose properties cannot be deleted is replaced by the TypeError the delete throws, as in body-parser', async () => {
    const reviver = (): unknown => { throw Object.seal(Object.assign(new Error('sealed'), { code: 'X' })) }
    const seen = await compare(server, json({ reviver }), bodyParser.json({ reviver }), { headers: JSON_HEADERS, body: '{"a":1}' })
    assert.equal(seen.error?.status, 400)
    assert.equal(seen.error?.type, 'entity.parse.failed')
    assert.match(seen.error?.message ?? '', /^Cannot delete property 'code'/)
  })

  it('an error the reviver throws that cannot take a status (frozen, a read-only status, a throwing getter) still gives a 400 entity.parse.failed', async () => {
    const throwing = [
      Object.freeze(new Error('frozen')),
      Object.defineProperty(new Error('read-only status'), 'status', { value: 422, writable: false, configurable: false }),
      Object.defineProperty(new Error('getter'), 'type', { get () { throw new Error('no type') }, configurable: false })
    ]
    for (const thrown of throwing) {
      const seen = await send(server, server.mount(json({ reviver: () => { throw thrown } })), { headers: JSON_HEADERS, body: '{"a":1}' })
      assert.equal(seen.error?.status, 400, thrown.message)
      assert.equal(seen.error?.statusCode, 400, thrown.message)
      assert.equal(seen.error?.type, 'entity.parse.failed', thrown.message)
    }
  })
})

describe('json() type', () => {
  it('takes application/json by default, with parameters and in any case', async () => {
    for (const type of ['application/json', 'application/json; charset=utf-8', 'APPLICATION/JSON', 'application/json ; foo=bar']) {
      const seen = await compare(server, json(), bodyParser.json(), { headers: { 'content-type': type }, body: '{"a":1}' })
      assert.deepEqual(seen.body, { a: 1 })
    }
  })

  it('skips other types, leaving req.body undefined', async () => {
    for (const type of ['text/plain', 'application/vnd.api+json', 'application/jsonx']) {
      const seen = await compare(server, json(), bodyParser.json(), { headers: { 'content-type': type }, body: '{"a":1}' })
      assert.deepEqual(seen.body, { undefined: true })
    }
  })

  it('takes +json suffixes when asked', async () => {
    const seen = await compare(server, json({ type: '+json' }), bodyParser.json({ type: '+json' }), { headers: { 'content-type': 'application/vnd.api+json' }, body: '{"a":1}' })
    assert.deepEqual(seen.body, { a: 1 })
  })
})

describe('json() charset', () => {
  it('decodes utf-16 bodies', async () => {
    for (const charset of ['utf-16', 'utf-16le', 'utf-16be']) {
      const body = iconv.encode('{"name":"论"}', charset, { addBOM: charset === 'utf-16' })
      const headers = { 'content-type': `application/json; charset=${charset}` }
      const seen = await compare(server, json(), bodyParser.json(), { headers, body })
      assert.deepEqual(seen.body, { name: '论' })
    }
  })

  it('refuses non-Unicode charsets with a 415 naming the charset in upper case', async () => {
    const seen = await compare(server, json(), bodyParser.json(), { headers: { 'content-type': 'application/json; charset=koi8-r' }, body: '{}' })
    assert.equal(seen.error?.status, 415)
    assert.equal(seen.error?.message, 'unsupported charset "KOI8-R"')
    assert.deepEqual(seen.error?.props, { charset: 'koi8-r' })
  })

  it('refuses an unknown utf- charset with a 415', async () => {
    const seen = await compare(server, json(), bodyParser.json(), { headers: { 'content-type': 'application/json; charset=utf-bogus' }, body: '{}' })
    assert.equal(seen.error?.type, 'charset.unsupported')
    assert.deepEqual(seen.error?.props, { charset: 'utf-bogus' })
  })

  it('uses defaultCharset when Content-Type names none', async () => {
    const body = iconv.encode('{"a":"é"}', 'utf-16le')
    const seen = await compare(server, json({ defaultCharset: 'utf-16le' }), bodyParser.json({ defaultCharset: 'utf-16le' } as bodyParser.OptionsJson), { headers: JSON_HEADERS, body })
    assert.deepEqual(seen.body, { a: 'é' })
  })
})

describe('json() onProtoPoisoning', () => {
  const poisoned: Array<[string, string]> = [
    ['{"__proto__":{"polluted":true}}', '__proto__'],
    ['{"a":[{"b":{"__proto__":{"polluted":true}}}]}', '__proto__'],
    ['{"\\u005f_proto__":{"polluted":true}}', '__proto__'],
    ['{"x":{"__pr\\u006fto__":{"polluted":true}}}', '__proto__'],
    ['{"constructor":{"prototype":{"polluted":true}}}', 'constructor.prototype'],
    ['[{"x":{"constructor":{"prototype":{}}}}]', 'constructor.prototype'],
    ['{"\\u0063onstructor":{"prot\\u006ftype":{"polluted":true}}}', 'constructor.prototype'],
    ['{"constructor":{"protot\\u0079pe":{"polluted":true}}}', 'constructor.prototype'],
    ['{"constructor":{"prototyp\\u0065":{"polluted":true}}}', 'constructor.prototype'],
    ['{"constructor":{"\\u0070rototype":{"polluted":true}}}', 'constructor.prototype']
  ]

  for (const [body, key] of poisoned) {
    it(`refuses ${body} by default with a 400 that names the key`, async () => {
      const seen = await send(server, server.mount(json()), { headers: JSON_HEADERS, body })
      assert.equal(seen.error?.status, 400)
      assert.equal(seen.error?.type, 'entity.parse.failed')
      assert.equal(seen.error?.message, `JSON body contains a forbidden "${key}" key`)
      assert.deepEqual(seen.error?.props, { body })
    })
  }

  it('removes the keys with \'remove\', keeping the rest', async () => {
    const body = '{"a":1,"__proto__":{"x":1},"b":{"constructor":{"prototype":{}},"c":[{"\\u005f_proto__":2,"d":3}]}}'
    const seen = await send(server, server.mount(json({ onProtoPoisoning: 'remove' })), { headers: JSON_HEADERS, body })
    assert.deepEqual(seen.body, { a: 1, b: { c: [{ d: 3 }] } })
  })

  it('keeps the keys as own properties with \'ignore\', as body-parser does', async () => {
    const body = '{"__proto__":{"x":1},"constructor":{"prototype":{"y":2}}}'
    const seen = await compare(server, json({ onProtoPoisoning: 'ignore' }), bodyParser.json(), { headers: JSON_HEADERS, body })
    assert.deepEqual(seen.body, JSON.parse(body))
  })

  it('lets nothing reach Object.prototype under any option', async () => {
    for (const mode of ['error', 'remove', 'ignore'] as const) {
      const path = server.mount(json({ onProtoPoisoning: mode }))
      for (const [body] of poisoned) await send(server, path, { headers: JSON_HEADERS, body })
    }
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined)
    assert.equal(Object.getPrototypeOf({}), Object.prototype)
  })

  it('accepts harmless look-alikes: a plain constructor value, other escapes, the words in values', async () => {
    const path = server.mount(json())
    for (const body of ['{"constructor":"Object"}', '{"constructor":{"name":"x"}}', '{"s":"caf\\u00e9 \\u0041"}', '{"note":"__proto__ and constructor.prototype"}', '{"proto":1,"__proto":2}']) {
      const seen = await send(server, path, { headers: JSON_HEADERS, body })
      assert.deepEqual(seen.body, JSON.parse(body), body)
    }
  })

  it('checks the value a reviver returns', async () => {
    const reviver = (key: string, value: unknown): unknown => key === 'wrap' ? { ['__proto__']: 1 } : value
    const seen = await send(server, server.mount(json({ reviver: reviver as never })), { headers: JSON_HEADERS, body: '{"wrap":"\\u005f"}' })
    assert.equal(seen.error?.message, 'JSON body contains a forbidden "__proto__" key')
  })

  it('walks very deep bodies without overflowing the stack', async () => {
    const deep = '{"a":'.repeat(20_000) + '{"__proto__":1}' + '}'.repeat(20_000)
    const seen = await send(server, server.mount(json({ limit: '1mb' })), { headers: JSON_HEADERS, body: deep })
    assert.equal(seen.error?.message, 'JSON body contains a forbidden "__proto__" key')
  })
})

/** What JSON.parse says about `text` on this Node.js version. */
function syntaxMessage (text: string): string {
  try {
    JSON.parse(text)
  } catch (err) {
    return (err as Error).message
  }
  throw new Error('valid JSON')
}
