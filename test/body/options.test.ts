// Options: defaults, validation when the middleware is made (the same TypeErrors as body-parser),
// and the rule that options are read once.
import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import type { IncomingMessage } from 'node:http'
import { createContext, runInContext } from 'node:vm'
import { gzipSync } from 'node:zlib'
import bodyParser from 'body-parser'
import { json, raw, readText, text, urlencoded } from '../../src/body/index.js'
import { compare, send, startBodyServer } from '../helpers/body-server.js'
import type { BodyServer } from '../helpers/body-server.js'

let server: BodyServer
before(async () => { server = await startBodyServer() })
after(async () => { await server.close() })

const parsers = { json, raw, text, urlencoded } as const
const references = { json: bodyParser.json, raw: bodyParser.raw, text: bodyParser.text, urlencoded: bodyParser.urlencoded } as const
type Name = keyof typeof parsers

/** Asserts that foyer and body-parser both throw the same TypeError for `options`, or both accept them. */
function sameValidation (name: Name, options: unknown): void {
  const ours = attempt(() => (parsers[name] as (o: unknown) => unknown)(options))
  const theirs = attempt(() => (references[name] as (o: unknown) => unknown)(options))
  assert.deepEqual(ours, theirs, `${name}(${String(JSON.stringify(options))})`)
}

function attempt (fn: () => unknown): string {
  try {
    fn()
    return 'accepted'
  } catch (err) {
    return `${(err as Error).name}: ${(err as Error).message}`
  }
}

describe('limit', () => {
  it('defaults to 100kb', async () => {
    const at = await send(server, server.mount(raw()), { headers: { 'content-type': 'application/octet-stream' }, body: Buffer.alloc(102400) })
    assert.equal((at.body as { hex: string }).hex.length, 204800)
    const over = await send(server, server.mount(raw()), { headers: { 'content-type': 'application/octet-stream' }, body: Buffer.alloc(102401) })
    assert.equal(over.error?.props['limit'], 102400)
  })

  it('takes a number of bytes or a bytes string', async () => {
    for (const [limit, bytes] of [[10, 10], ['1kb', 1024], ['1.5kb', 1536], ['2 MB', 2097152], [null, 102400]] as const) {
      const seen = await compare(server, raw({ limit }), bodyParser.raw({ limit: limit as number }), { headers: { 'content-type': 'application/octet-stream' }, body: Buffer.alloc(bytes + 1) })
      assert.equal(seen.error?.props['limit'], bytes)
    }
  })

  it('throws a TypeError naming the option for an invalid limit, when the middleware is made', () => {
    for (const name of Object.keys(parsers) as Name[]) {
      for (const limit of ['abc', '', NaN, true, {}, '10 potatoes']) sameValidation(name, { limit })
    }
    assert.throws(() => json({ limit: 'abc' }), { name: 'TypeError', message: 'option limit "abc" is invalid' })
  })
})

describe('verify', () => {
  it('throws a TypeError when it is not a function, and ignores falsy values', () => {
    for (const name of Object.keys(parsers) as Name[]) {
      for (const verify of ['yes', 1, {}, true, false, 0, '', null]) sameValidation(name, { verify })
    }
    assert.throws(() => text({ verify: 'yes' as never }), { name: 'TypeError', message: 'option verify must be function' })
  })

  it('receives req, res, the bytes and the charset', async () => {
    const calls: unknown[][] = []
    const verify = (req: IncomingMessage, res: unknown, buf: Buffer, encoding: string): void => {
      calls.push([typeof req.headers, typeof (res as { setHeader?: unknown }).setHeader, buf.toString(), encoding])
    }
    await send(server, server.mount(json({ verify })), { headers: { 'content-type': 'application/json; charset=UTF-8' }, body: '{"a":1}' })
    await send(server, server.mount(text({ verify, defaultCharset: 'latin1' })), { headers: { 'content-type': 'text/plain' }, body: 'hi' })
    assert.deepEqual(calls, [['object', 'function', '{"a":1}', 'utf-8'], ['object', 'function', 'hi', 'latin1']])
  })
})

describe('verify and a type function', () => {
  it('are called without a receiver, as body-parser calls verify, by the middleware and the readers alike', async () => {
    const receivers: Array<[string, unknown]> = []
    const verify = function (this: unknown): void { receivers.push(['verify', this]) }
    const type = function (this: unknown): boolean { receivers.push(['type', this]); return true }
    const options = { headers: { 'content-type': 'text/plain' }, body: 'hi' }
    const reader = (req: IncomingMessage, _res: unknown, next: (err?: unknown) => void): void => {
      readText(req, { verify, type }).then((body) => { (req as { body?: unknown }).body = body; next() }, next)
    }
    assert.equal((await send(server, server.mount(text({ verify, type })), options)).body, 'hi')
    assert.equal((await send(server, server.mount(reader), options)).body, 'hi')
    assert.equal(await readText(new Request('http://localhost/', { method: 'POST', body: 'hi' }), { verify, type }), 'hi')
    const verifyOnly = function (this: unknown): void { receivers.push(['verify', this]) }
    await compare(server, text({ verify: verifyOnly }), bodyParser.text({ verify: verifyOnly }), options)
    assert.deepEqual(receivers, [
      ['type', undefined], ['verify', undefined], ['type', undefined], ['verify', undefined], ['type', undefined], ['verify', undefined],
      ['verify', undefined], ['verify', undefined]
    ])
  })
})

describe('type', () => {
  it('defaults to each parser\'s own media type', async () => {
    const cases: Array<[Name, string, string]> = [
      ['json', 'application/json', '{}'], ['raw', 'application/octet-stream', 'x'],
      ['text', 'text/plain', 'x'], ['urlencoded', 'application/x-www-form-urlencoded', 'a=1']
    ]
    for (const [name, type, body] of cases) {
      for (const [other] of cases) {
        const seen = await send(server, server.mount(parsers[other]()), { headers: { 'content-type': type }, body })
        assert.equal(seen.body !== undefined && !(typeof seen.body === 'object' && seen.body !== null && 'undefined' in seen.body), name === other, `${other} with ${type}`)
      }
    }
  })

  it('matches extensions, wildcards, suffixes and arrays as type-is does', async () => {
    const cases: Array<[unknown, string]> = [
      ['json', 'application/json'], ['*/*', 'application/x-anything'], ['*/json', 'text/json'], ['application/*', 'application/foo'],
      ['+json', 'application/ld+json'], ['*/*+json', 'application/ld+json'], [['text/html', 'application/json'], 'application/json'],
      ['urlencoded', 'application/x-www-form-urlencoded'], ['bin', 'application/octet-stream'], ['txt', 'text/plain'],
      ['application/json', 'application/ld+json'], ['json', 'text/json'], ['+json', 'application/json'], [[], 'a/b'], [[], 'not a type']
    ]
    for (const [type, contentType] of cases) {
      await compare(server, text({ type: type as string }), bodyParser.text({ type: type as string }), { headers: { 'content-type': contentType }, body: '{}' })
    }
  })

  it('calls a function with the request and parses when it returns truthy', async () => {
    const seenRequests: string[] = []
    const type = (req: IncomingMessage): unknown => { seenRequests.push(req.headers['x-parse'] as string); return req.headers['x-parse'] === 'yes' ? 1 : '' }
    const yes = await compare(server, text({ type }), bodyParser.text({ type }), { headers: { 'x-parse': 'yes' }, body: 'hi' })
    const no = await compare(server, text({ type }), bodyParser.text({ type }), { headers: { 'x-parse': 'no', 'content-type': 'text/plain' }, body: 'hi' })
    assert.equal(yes.body, 'hi')
    assert.deepEqual(no.body, { undefined: true })
    assert.deepEqual(seenRequests, ['yes', 'yes', 'no', 'no'])
  })

  it('answers each request for its own Content-Type when the header changes from one request to the next', async () => {
    // one middleware of each kind for the whole sequence, as in a server
    const ours = server.mount(json())
    const theirs = server.mount(bodyParser.json())
    const long = 'application/json; x=' + 'a'.repeat(300)
    const headers = [
      'application/json', 'text/plain', 'application/json', 'application/json; charset=utf-8', 'application/json; charset=latin1',
      'application/json', long, long, 'application/json; charset=latin1', 'text/plain', 'text/plain', 'application/json'
    ]
    for (const contentType of headers) {
      const options = { headers: { 'content-type': contentType }, body: '{"a":1}' }
      const got = await send(server, ours, options)
      const expected = await send(server, theirs, options)
      assert.deepEqual({ error: got.error, body: got.body }, { error: expected.error, body: expected.body }, contentType.slice(0, 40))
    }
  })

  it('reads a type array at every request, as body-parser does: a type added or taken out later counts', async () => {
    const ourTypes = ['application/json']
    const theirTypes = ['application/json']
    const ours = server.mount(json({ type: ourTypes }))
    const theirs = server.mount(bodyParser.json({ type: theirTypes }))
    // expected: req.body as the helper describes it ({ undefined: true } when the parser passed)
    const check = async (contentType: string, expected: unknown): Promise<void> => {
      const options = { headers: { 'content-type': contentType }, body: '{"a":1}' }
      const got = await send(server, ours, options)
      assert.deepEqual({ error: got.error, body: got.body }, await send(server, theirs, options).then((r) => ({ error: r.error, body: r.body })), contentType)
      assert.deepEqual(got.body, expected, contentType)
    }
    await check('application/vnd.api+json', { undefined: true })
    await check('application/json', { a: 1 })
    for (const types of [ourTypes, theirTypes]) types.push('application/vnd.api+json')
    await check('application/vnd.api+json', { a: 1 })
    for (const types of [ourTypes, theirTypes]) types.shift()
    await check('application/json', { undefined: true })
    await check('application/vnd.api+json', { a: 1 })
  })

  it('falls back to the default for a falsy type', async () => {
    const seen = await compare(server, json({ type: '' }), bodyParser.json({ type: '' }), { headers: { 'content-type': 'application/json' }, body: '{"a":1}' })
    assert.deepEqual(seen.body, { a: 1 })
  })
})

describe('inflate', () => {
  it('defaults to true and is turned off only by false', async () => {
    const gzipped = { headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' }, body: gzipSync('{"a":1}') }
    for (const inflate of [undefined, true, 0, 'no', null, '']) {
      sameValidation('json', { inflate })
      const seen = await compare(server, json({ inflate: inflate as boolean }), bodyParser.json({ inflate: inflate as boolean }), gzipped)
      assert.deepEqual(seen.body, { a: 1 }, `inflate: ${String(inflate)}`)
    }
    // (its error carries `encoding` as well as body-parser's `charset`: see errors.test.ts)
    assert.equal((await send(server, server.mount(json({ inflate: false })), gzipped)).error?.type, 'encoding.unsupported')
  })
})

describe('defaultCharset', () => {
  it('is validated by urlencoded, which takes utf-8 or iso-8859-1, as in body-parser, and must be a string for json and text', () => {
    // eslint-disable-next-line no-new-wrappers
    for (const defaultCharset of ['utf-8', 'iso-8859-1', 'UTF-8', 'latin1', 'utf8', 'bogus', '', 0, false, null, new String('latin1')]) {
      for (const name of Object.keys(parsers) as Name[]) sameValidation(name, { defaultCharset })
    }
    assert.throws(() => urlencoded({ defaultCharset: 'latin1' as never }), { name: 'TypeError', message: 'option defaultCharset must be either utf-8 or iso-8859-1' })
    // body-parser takes anything else, and then fails on every request with a body: json() with a
    // TypeError passed to next (a 500), text() with an uncaught exception, which ends the process
    for (const defaultCharset of [['utf-8'], { toString: () => 'iso-8859-1' }, 5, true]) {
      sameValidation('urlencoded', { defaultCharset })
      sameValidation('raw', { defaultCharset })
      for (const parser of [json, text]) {
        assert.throws(() => parser({ defaultCharset: defaultCharset as never }), { name: 'TypeError', message: 'option defaultCharset must be a string' })
      }
    }
  })

  it('may be a String object, as in body-parser', async () => {
    // eslint-disable-next-line no-new-wrappers
    const options = { defaultCharset: new String('latin1') as unknown as string }
    const seen = await compare(server, text(options), bodyParser.text(options), { headers: { 'content-type': 'text/plain' }, body: Buffer.from([0xe9]) })
    assert.equal(seen.body, 'é')
  })

  it('json refuses a non-utf default at request time, as body-parser does', async () => {
    const seen = await compare(server, json({ defaultCharset: 'latin1' }), bodyParser.json({ defaultCharset: 'latin1' } as bodyParser.OptionsJson), { headers: { 'content-type': 'application/json' }, body: '{}' })
    assert.equal(seen.error?.message, 'unsupported charset "LATIN1"')
  })
})

describe('parameterLimit and depth', () => {
  it('throw the TypeErrors body-parser throws', () => {
    for (const parameterLimit of [0, -1, NaN, null, 'x', '10', 1.5, Infinity, 'Infinity']) sameValidation('urlencoded', { parameterLimit })
    for (const depth of [-1, NaN, 'x', 0, 1.5, Infinity, null, false]) {
      sameValidation('urlencoded', { extended: true, depth })
      sameValidation('urlencoded', { extended: false, depth })
    }
    assert.throws(() => urlencoded({ parameterLimit: 0 }), { name: 'TypeError', message: 'option parameterLimit must be a positive number' })
    assert.throws(() => urlencoded({ extended: true, depth: -1 }), { name: 'TypeError', message: 'option depth must be a zero or a positive number' })
  })

  it('take odd but accepted values the way body-parser does', async () => {
    const headers = { 'content-type': 'application/x-www-form-urlencoded' }
    for (const options of [{ parameterLimit: '2' }, { parameterLimit: 2.9 }, { extended: true, depth: false }, { extended: true, depth: null }, { extended: true, depth: '1' }]) {
      for (const body of ['a=1&b=2&c=3', 'a[b][c][d][e][f][g]=1', 'a[b]=1']) {
        await compare(server, urlencoded(options as never), bodyParser.urlencoded(options as never), { headers, body })
      }
    }
  })
})

describe('onProtoPoisoning', () => {
  it('throws a TypeError for anything but error, remove or ignore', () => {
    assert.throws(() => json({ onProtoPoisoning: 'warn' as never }), { name: 'TypeError', message: 'option onProtoPoisoning must be "error", "remove" or "ignore"' })
    for (const onProtoPoisoning of ['error', 'remove', 'ignore', undefined] as const) json({ onProtoPoisoning })
  })
})

/**
 * Runs `make` with `values` put on Object.prototype, as a prototype pollution elsewhere in the
 * application would, and takes them away again before anything else runs.
 */
function polluted<T> (values: Record<string, unknown>, make: () => T): T {
  const proto = Object.prototype as Record<string, unknown>
  try {
    for (const [key, value] of Object.entries(values)) proto[key] = value
    return make()
  } finally {
    for (const key of Object.keys(values)) Reflect.deleteProperty(proto, key)
  }
}

describe('options and Object.prototype', () => {
  const pollution = {
    limit: '1b',
    type: 'text/plain',
    inflate: false,
    defaultCharset: 'iso-8859-1',
    verify: () => { throw new Error('polluted verify') }
  }

  it('reads nothing from Object.prototype when no options are given, as body-parser does', async () => {
    // gzip bodies of the parser's own type, in UTF-8, with no charset named
    const requests = {
      json: { type: 'application/json', body: '{"a":"é"}', parsed: { a: 'é' } },
      raw: { type: 'application/octet-stream', body: 'abc', parsed: { hex: '616263' } },
      text: { type: 'text/plain', body: 'é', parsed: 'é' },
      urlencoded: { type: 'application/x-www-form-urlencoded', body: 'a=é', parsed: { a: 'é' } }
    }
    for (const name of Object.keys(parsers) as Name[]) {
      const [ours, theirs] = polluted(pollution, () => [parsers[name](), references[name]()])
      const { type, body, parsed } = requests[name]
      const seen = await compare(server, ours, theirs, { headers: { 'content-type': type, 'content-encoding': 'gzip' }, body: gzipSync(body) })
      assert.deepEqual(seen.body, parsed, name)
    }
  })

  it('reads inherited values from an options object, Object.prototype\'s too, as body-parser does', async () => {
    const [ours, theirs] = polluted({ limit: '1b' }, () => [json({}), bodyParser.json({})])
    const seen = await compare(server, ours, theirs, { headers: { 'content-type': 'application/json' }, body: '{"a":1}' })
    assert.equal(seen.error?.type, 'entity.too.large')
  })

  it('never reads onProtoPoisoning, which only foyer has, from Object.prototype', async () => {
    const body = '{"__proto__":{"x":1}}'
    const headers = { 'content-type': 'application/json' }
    const mw = polluted({ onProtoPoisoning: 'ignore' }, () => json({ limit: '1mb' }))
    assert.equal((await send(server, server.mount(mw), { headers, body })).error?.message, 'JSON body contains a forbidden "__proto__" key')
    assert.equal(polluted({ onProtoPoisoning: 'warn' }, () => attempt(() => json({}))), 'accepted')
    // from any other object the options inherit from, it is read, and a Proxy is asked
    const inherited = json(Object.create({ onProtoPoisoning: 'ignore' }) as object)
    assert.deepEqual((await send(server, server.mount(inherited), { headers, body })).body, JSON.parse(body))
    const proxied = json(new Proxy({}, { get: (_target, key) => key === 'onProtoPoisoning' ? 'ignore' : undefined }))
    assert.deepEqual((await send(server, server.mount(proxied), { headers, body })).body, JSON.parse(body))
    // but not what a Proxy passes on from Object.prototype through its target
    const forwarding = polluted({ onProtoPoisoning: 'ignore' }, () => json(new Proxy({ limit: '1mb' }, {})))
    assert.equal((await send(server, server.mount(forwarding), { headers, body })).error?.message, 'JSON body contains a forbidden "__proto__" key')
    // nor what a Proxy over a store with no prototype brings from an ordinary object it falls back to
    const defaults: Record<string, unknown> = { limit: '1mb' }
    const store = Object.create(null) as Record<string, unknown>
    const fallingBack = polluted({ onProtoPoisoning: 'ignore' }, () => json(new Proxy(store, { get: (target, key: string) => key in target ? target[key] : defaults[key] })))
    assert.equal((await send(server, server.mount(fallingBack), { headers, body })).error?.message, 'JSON body contains a forbidden "__proto__" key')
    // however long a chain of ordinary objects is
    let deep: object = Object.prototype
    for (let i = 0; i < 100; i++) deep = Object.create(deep) as object
    const long = polluted({ onProtoPoisoning: 'ignore' }, () => json(deep))
    assert.equal((await send(server, server.mount(long), { headers, body })).error?.message, 'JSON body contains a forbidden "__proto__" key')
    // a chain that cannot be walked (a Proxy whose prototype is itself, or whose trap throws)
    // is read as body-parser reads options
    const cyclic: object = new Proxy({ onProtoPoisoning: 'ignore' }, { getPrototypeOf: () => cyclic })
    assert.deepEqual((await send(server, server.mount(json(cyclic)), { headers, body })).body, JSON.parse(body))
    const refusing = new Proxy({ onProtoPoisoning: 'ignore' as const }, { getPrototypeOf () { throw new Error('no prototype') } })
    assert.deepEqual((await send(server, server.mount(json(refusing)), { headers, body })).body, JSON.parse(body))
    // but not for Object.prototype's own value, passed on
    const unknowable: object = new Proxy({ limit: '1mb' }, { getPrototypeOf: () => unknowable })
    const passedOn = polluted({ onProtoPoisoning: 'ignore' }, () => json(unknowable))
    assert.equal((await send(server, server.mount(passedOn), { headers, body })).error?.message, 'JSON body contains a forbidden "__proto__" key')
    // an object with no prototype and a constructor whose prototype it is, a class's whose
    // prototype was taken away, is not taken for an Object.prototype
    class Detached { get onProtoPoisoning (): 'ignore' { return 'ignore' } }
    Object.setPrototypeOf(Detached.prototype, null)
    assert.deepEqual((await send(server, server.mount(json(new Detached())), { headers, body })).body, JSON.parse(body))
    // nor from the Object.prototype of another realm, for options made there, even with its
    // constructor replaced too
    const realm = createContext({})
    runInContext('Object.prototype.onProtoPoisoning = "ignore"; Object.prototype.constructor = 1', realm)
    const foreign = json(runInContext('({ limit: "1mb" })', realm) as object)
    assert.equal((await send(server, server.mount(foreign), { headers, body })).error?.message, 'JSON body contains a forbidden "__proto__" key')
  })
})

describe('options are read once', () => {
  it('changing the options object later changes nothing', async () => {
    const options: { limit: number | string, strict: boolean, type: string } = { limit: 5, strict: true, type: 'application/json' }
    const mw = json(options)
    options.limit = '1mb'
    options.strict = false
    options.type = 'text/plain'
    const path = server.mount(mw)
    assert.equal((await send(server, path, { headers: { 'content-type': 'application/json' }, body: '{"a":1}' })).error?.type, 'entity.too.large')
    assert.equal((await send(server, path, { headers: { 'content-type': 'application/json' }, body: '1' })).error?.type, 'entity.parse.failed')
  })

  it('works with no options at all', async () => {
    for (const name of Object.keys(parsers) as Name[]) sameValidation(name, undefined)
  })
})
