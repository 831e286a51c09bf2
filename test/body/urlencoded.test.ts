import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import bodyParser from 'body-parser'
import fc from 'fast-check'
import iconv from 'iconv-lite'
import qs from 'qs'
import { urlencoded } from '../../src/body/index.js'
import type { UrlencodedOptions } from '../../src/body/index.js'
import { resolveCommon, resolveUrlencoded } from '../../src/body/options.js'
import { createUrlencodedParse } from '../../src/body/urlencoded.js'
import { compare, send, startBodyServer } from '../helpers/body-server.js'
import type { BodyServer } from '../helpers/body-server.js'

const FORM = { 'content-type': 'application/x-www-form-urlencoded' }

let server: BodyServer
before(async () => { server = await startBodyServer() })
after(async () => { await server.close() })

/** Sends `body` through urlencoded(options) and body-parser's, asserting the same outcome. */
async function same (options: UrlencodedOptions, body: string | Buffer, headers: Record<string, string> = FORM): Promise<unknown> {
  const seen = await compare(server, urlencoded(options), bodyParser.urlencoded(options as bodyParser.OptionsUrlencoded), { headers, body })
  return seen.error ?? seen.body
}

describe('urlencoded()', () => {
  it('parses key-value pairs into req.body', async () => {
    assert.deepEqual(await same({}, 'user=tobi&pass=ferret%21&sp=a+b'), { user: 'tobi', pass: 'ferret!', sp: 'a b' })
  })

  it('gives {} for an empty body', async () => {
    assert.deepEqual(await same({}, ''), {})
  })

  it('makes an array of a repeated key', async () => {
    assert.deepEqual(await same({}, 'a=1&a=2&b=3&a=4'), { a: ['1', '2', '4'], b: '3' })
  })

  it('keeps keys without a value, drops the empty key', async () => {
    assert.deepEqual(await same({}, 'a&b=&=c&&d'), { a: '', b: '', d: '' })
  })

  it('keeps malformed escapes as written', async () => {
    assert.deepEqual(await same({}, 'a=%ZZ&b=%E9&c=100%'), { a: '%ZZ', b: '%E9', c: '100%' })
  })

  it('skips other types by default', async () => {
    assert.deepEqual(await same({}, 'a=1', { 'content-type': 'text/plain' }), { undefined: true })
  })
})

describe('urlencoded() extended', () => {
  const bodies = [
    'a[b]=1&a[c]=2', 'a[]=1&a[]=2', 'a[0]=x&a[2]=y', 'a[1]=b&a[0]=a', 'a[100]=x', 'a[101]=x&a[]=y', 'a[b][c][d]=1',
    '[0]=x&[]=y&[b]=z', 'a[b]=1&a=2', 'a=2&a[b]=1', 'a[]=1&a=2', 'a%5Bb%5D=1', 'a[b=c]=d', 'a[=1', 'a]=1',
    'a[][b]=1&a[][c]=2', 'toString=1&hasOwnProperty=2', 'a.b=1',
    'a[1][x]=1&a[0][y]=2', 'a=1&a=2&a[2]=3', 'a[0]=1&a[0]=2&a[1][b]=3', 'a[toString][b]=1', 'a[01]=x&a[1]=y',
    'a[0]=1&a[x]=2', 'a[x]=1&a[0]=2', 'a[b]=1&a[b][c]=2', 'a[0][b]=1&a[0]=2', 'a[99]=x&a[100]=y',
    'a[1234567890123456]=x', 'a[b]z[c]=1', '0[a]=1&1=2', 'a[-1]=x&a[1e1]=y'
  ]

  it('defaults to false: keys are kept as written', async () => {
    assert.deepEqual(await same({}, 'a[b]=1&a[c]=2'), { 'a[b]': '1', 'a[c]': '2' })
  })

  for (const body of bodies) {
    it(`builds ${body} as qs builds it (extended true and false)`, async () => {
      await same({ extended: true }, body)
      await same({ extended: false }, body)
    })
  }

  it('nests keys with extended', async () => {
    assert.deepEqual(await same({ extended: true }, 'a[b][c]=1&a[d][]=2&a[d][]=3'), { a: { b: { c: '1' }, d: ['2', '3'] } })
  })

  it('never lets __proto__ or constructor reach Object.prototype', async () => {
    for (const extended of [true, false]) {
      for (const body of ['__proto__[polluted]=1', 'a[__proto__][polluted]=1', 'constructor[prototype][polluted]=1', '__proto__=x&a=1', '[__proto__]=1']) {
        await same({ extended }, body)
      }
    }
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined)
  })
})

describe('urlencoded() depth', () => {
  it('accepts 32 levels by default and refuses 33 with a 400', async () => {
    assert.equal(typeof await same({ extended: true }, 'a' + '[b]'.repeat(32) + '=1'), 'object')
    const error = await same({ extended: true }, 'a' + '[b]'.repeat(33) + '=1') as { status: number, type: string, message: string }
    assert.equal(error.status, 400)
    assert.equal(error.type, 'querystring.parse.rangeError')
    assert.equal(error.message, 'The input exceeded the depth')
  })

  it('takes a lower depth', async () => {
    assert.equal((await same({ extended: true, depth: 1 }, 'a[b][c]=1') as { type: string }).type, 'querystring.parse.rangeError')
    assert.deepEqual(await same({ extended: true, depth: 1 }, 'a[b]=1'), { a: { b: '1' } })
  })

  it('with depth 0, nests nothing', async () => {
    assert.deepEqual(await same({ extended: true, depth: 0 }, 'a[b][c]=1'), { 'a[b][c]': '1' })
  })

  it('does not apply without extended', async () => {
    assert.deepEqual(await same({ depth: 1 }, 'a[b][c][d]=1'), { 'a[b][c][d]': '1' })
  })
})

describe('urlencoded() parameterLimit', () => {
  const form = (n: number): string => Array.from({ length: n }, (_, i) => `k${i}=v`).join('&')

  it('accepts 1000 parameters by default and refuses 1001 with a 413', async () => {
    for (const extended of [false, true]) {
      assert.equal(Object.keys(await same({ extended }, form(1000)) as object).length, 1000)
      const error = await same({ extended }, form(1001)) as { status: number, type: string, message: string }
      assert.equal(error.status, 413)
      assert.equal(error.type, 'parameters.too.many')
      assert.equal(error.message, 'too many parameters')
    }
  })

  it('takes another limit', async () => {
    assert.equal(Object.keys(await same({ parameterLimit: 10 }, form(10)) as object).length, 10)
    assert.equal((await same({ parameterLimit: 10 }, form(11)) as { type: string }).type, 'parameters.too.many')
  })

  it('counts empty parameters too', async () => {
    assert.equal((await same({ parameterLimit: 3 }, '&&&') as { type: string }).type, 'parameters.too.many')
  })

  // Not timed, these two: a parse that is quadratic in the parameters (qs alone, on repeated
  // keys) would take minutes on them (a linear one, under a second), and the test's timeout ends it.
  // (foyer alone: body-parser takes minutes over them without a limit)
  it('refuses 100,000 & past a limit, and takes them without one', { timeout: 60_000 }, async () => {
    const body = '&'.repeat(100_000)
    const refused = await send(server, server.mount(urlencoded({ limit: '1mb', parameterLimit: 1000 })), { headers: FORM, body })
    assert.equal(refused.error?.type, 'parameters.too.many')
    const taken = await send(server, server.mount(urlencoded({ limit: '1mb', parameterLimit: Infinity })), { headers: FORM, body })
    assert.deepEqual(taken.body, {})
  })

  it('parses 300,000 repeated keys', { timeout: 60_000 }, async () => {
    const cases: Array<[boolean, string, string, number]> = [
      [true, 'a[]=1&'.repeat(300_000), 'a', 300_000],
      [false, 'a=1&'.repeat(300_000), 'a', 300_000],
      [true, 'a=1&'.repeat(300_000), 'a', 300_000],
      [false, 'a[]=1&'.repeat(300_000), 'a[]', 300_000],
      [true, 'a[]='.repeat(300_000), 'a', 1]
    ]
    for (const [extended, body, key, length] of cases) {
      const seen = await send(server, server.mount(urlencoded({ extended, limit: '2mb', parameterLimit: 400_000 })), { headers: FORM, body })
      assert.equal(((seen.body as Record<string, unknown[]>)[key])?.length, length)
    }
  })
})

describe('urlencoded() charset', () => {
  it('decodes an iso-8859-1 form', async () => {
    const body = iconv.encode('name=caf%E9&raw=é', 'latin1')
    assert.deepEqual(await same({}, body, { 'content-type': 'application/x-www-form-urlencoded; charset=iso-8859-1' }), { name: 'café', raw: 'é' })
  })

  it('uses defaultCharset when Content-Type names none', async () => {
    assert.deepEqual(await same({ defaultCharset: 'iso-8859-1' }, 'name=caf%E9'), { name: 'café' })
  })

  for (const charset of ['utf-16', 'utf8', 'latin1', 'koi8-r', '__proto__']) {
    it(`refuses charset=${charset} with a 415 (only utf-8 and iso-8859-1)`, async () => {
      const error = await same({}, 'a=1', { 'content-type': `application/x-www-form-urlencoded; charset=${charset}` }) as { status: number, type: string, props: unknown }
      assert.equal(error.status, 415)
      assert.equal(error.type, 'charset.unsupported')
      assert.deepEqual(error.props, { charset })
    })
  }

  it('charsetSentinel: a utf8 check mark picks the charset and is dropped', async () => {
    assert.deepEqual(await same({ charsetSentinel: true }, 'utf8=%E2%9C%93&name=%C3%A9', { 'content-type': 'application/x-www-form-urlencoded; charset=iso-8859-1' }), { name: 'é' })
    assert.deepEqual(await same({ charsetSentinel: true }, 'utf8=%26%2310003%3B&name=%E9'), { name: 'é' })
    assert.deepEqual(await same({ charsetSentinel: true }, 'name=x&utf8=other'), { name: 'x' })
    assert.deepEqual(await same({}, 'utf8=%E2%9C%93&name=x'), { utf8: '✓', name: 'x' })
  })

  it('interpretNumericEntities decodes &#NNNN; in iso-8859-1 forms', async () => {
    const headers = { 'content-type': 'application/x-www-form-urlencoded; charset=iso-8859-1' }
    assert.deepEqual(await same({ interpretNumericEntities: true }, 'a=%26%239786%3B&b=%26%23128512%3B', headers), { a: '☺', b: '😀' })
    assert.deepEqual(await same({}, 'a=%26%239786%3B', headers), { a: '&#9786;' })
    assert.deepEqual(await same({ interpretNumericEntities: true }, 'a=%26%239786%3B'), { a: '&#9786;' })
  })
})

describe('urlencoded() parse matches qs with body-parser\'s options', () => {
  const pieces = [
    'a', 'b', '0', '1', '5', '[', ']', '[]', '[0]', '[1]', '[b]', '[__proto__]', '=', '=', '&', '&', '%5B', '%5d', '%', '%2', '%41',
    '%26%2310003%3B', '%26%23233%3B', '%E2%9C%93', '%E9', '%C3%A9', '+', '.', '__proto__', 'constructor', 'toString',
    'utf8=%E2%9C%93', 'utf8=%26%2310003%3B', 'utf8=', '&#', '%ZZ', 'é'
  ]
  const body = fc.array(fc.constantFrom(...pieces), { maxLength: 24 }).map((parts) => parts.join(''))

  it('gives the same object or the same refusal for any form', () => {
    fc.assert(fc.property(
      body, fc.boolean(), fc.constantFrom('utf-8', 'iso-8859-1'), fc.boolean(), fc.boolean(), fc.constantFrom(0, 1, 2, 32), fc.constantFrom(4, 1000),
      (text, extended, charset, charsetSentinel, interpretNumericEntities, depth, parameterLimit) => {
        const options = { extended, charsetSentinel, interpretNumericEntities, depth, parameterLimit }
        const parse = createUrlencodedParse(resolveUrlencoded(options, resolveCommon(undefined, 'x/y')))
        assert.deepEqual(outcome(() => parse(text, charset)), outcome(() => reference(text, charset, options)), text)
      }
    ), { numRuns: 3000 })
  })
})

describe('urlencoded() extended: nested keys of the usual shape match qs', () => {
  // name[a][0][b]-style keys with plain names and small indexes, and the collisions between them
  const key = fc.tuple(
    fc.constantFrom('a', 'b', '0', 'toString'),
    fc.array(fc.constantFrom('a', 'b', 'length', 'constructor', '0', '1', '2', '3', '01', '99', '100'), { maxLength: 4 })
  ).map(([parent, segments]) => parent + segments.map((segment) => `[${segment}]`).join(''))
  const form = fc.array(fc.tuple(key, fc.constantFrom('1', '2', '')), { maxLength: 12 })
    .map((pairs) => pairs.map(([k, v]) => `${k}=${v}`).join('&'))

  it('gives the same object or the same refusal for any such form', () => {
    fc.assert(fc.property(form, fc.constantFrom(1, 2, 3, 32), (text, depth) => {
      const options = { extended: true, charsetSentinel: false, interpretNumericEntities: false, depth, parameterLimit: 1000 }
      const parse = createUrlencodedParse(resolveUrlencoded(options, resolveCommon(undefined, 'x/y')))
      assert.deepEqual(outcome(() => parse(text, 'utf-8')), outcome(() => reference(text, 'utf-8', options)), text)
    }), { numRuns: 3000 })
  })
})

describe('urlencoded() extended: nested keys as browsers encode them match qs', () => {
  // The same shapes with each bracket raw or percent-encoded in either case, and values with
  // spaces, escapes, malformed escapes, brackets and '='; now and then a key of another shape.
  const mostly = <T>(usual: fc.Arbitrary<T>, rare: fc.Arbitrary<T>) => fc.oneof({ arbitrary: usual, weight: 50 }, { arbitrary: rare, weight: 1 })
  const bracket = (raw: string, encoded: string) => fc.constantFrom(raw, encoded, encoded.toLowerCase())
  const segment = mostly(fc.constantFrom('a', 'b', 'c', '0', '1', '2', '3', '01'), fc.constantFrom('c d', 'x+y', '__proto__', '%41', '', '5['))
  const group = fc.tuple(bracket('[', '%5B'), segment, bracket(']', '%5D')).map(([open, name, close]) => open + name + close)
  const key = fc.tuple(
    mostly(fc.constantFrom('a', 'b', '0'), fc.constantFrom('a+b', 'a%20b', '__proto__', '', 'a]')),
    fc.array(group, { maxLength: 4 }),
    mostly(fc.constant(''), fc.constantFrom(']', '%5D', 'x', '[', '%5B'))
  ).map(([parent, groups, tail]) => parent + groups.join('') + tail)
  const value = mostly(fc.constantFrom('1', '2', '', 'a+b', 'caf%C3%A9', '%E0%A4', '%5B%5D', '%5B%E0', '100%', 'x]=y', 'x%5D=y', '%3D'), fc.constant('x=y'))
  const form = fc.array(fc.tuple(key, fc.option(value, { nil: undefined, freq: 10 })), { maxLength: 12 })
    .map((pairs) => pairs.map(([k, v]) => v === undefined ? k : `${k}=${v}`).join('&'))

  it('gives the same object or the same refusal for any such form', () => {
    fc.assert(fc.property(form, fc.constantFrom(1, 2, 3, 32), fc.constantFrom(3, 1000), (text, depth, parameterLimit) => {
      const options = { extended: true, charsetSentinel: false, interpretNumericEntities: false, depth, parameterLimit }
      const parse = createUrlencodedParse(resolveUrlencoded(options, resolveCommon(undefined, 'x/y')))
      assert.deepEqual(outcome(() => parse(text, 'utf-8')), outcome(() => reference(text, 'utf-8', options)), text)
    }), { numRuns: 3000 })
  })

  // Forms as a browser sends a nested object: no collisions, brackets encoded either way, the
  // pairs sometimes in reverse order, and one of them repeated.
  const leaf = fc.constantFrom('1', '', 'a+b', 'caf%C3%A9', '%E0', '%5B%5D', 'x%5D=y', 'x]=y')
  const tree = fc.letrec((tie) => ({
    node: fc.oneof({ arbitrary: leaf, weight: 3 }, { arbitrary: tie('object'), weight: 1 }, { arbitrary: tie('array'), weight: 1 }),
    object: fc.dictionary(fc.constantFrom('id', 'name', 'items', 'sku', 'qty', '7', 'x'), tie('node'), { maxKeys: 3 }),
    array: fc.array(tie('node'), { maxLength: 3 })
  })).object
  const pairsOf = (value: unknown, path: string[]): Array<[string[], string]> => {
    if (typeof value === 'string') return [[path, value]]
    return Object.entries(value as object).flatMap(([k, v]) => pairsOf(v, [...path, k]))
  }
  const browserForm = fc.tuple(fc.dictionary(fc.constantFrom('order', 'user', 'z'), tree, { minKeys: 1, maxKeys: 2 }), fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }), fc.boolean(), fc.nat(5))
    .map(([object, encoded, reversed, repeat]) => {
      const open = (at: number) => encoded[at % 40] === true ? '%5B' : '['
      const close = (at: number) => encoded[(at + 7) % 40] === true ? '%5d' : ']'
      const pairs = pairsOf(object, []).filter(([path]) => path.length > 0)
      if (reversed) pairs.reverse()
      if (pairs.length > 0) pairs.push(pairs[repeat % pairs.length] as [string[], string])
      let at = 0
      return pairs.map(([[parent, ...segments], v]) => (parent as string) + segments.map((segment) => open(at++) + segment + close(at)).join('') + '=' + v).join('&')
    })

  it('gives the same object as qs for nested objects as browsers send them', () => {
    fc.assert(fc.property(browserForm, (text) => {
      const options = { extended: true, charsetSentinel: false, interpretNumericEntities: false, depth: 32, parameterLimit: 1000 }
      const parse = createUrlencodedParse(resolveUrlencoded(options, resolveCommon(undefined, 'x/y')))
      assert.deepEqual(outcome(() => parse(text, 'utf-8')), outcome(() => reference(text, 'utf-8', options)), text)
    }), { numRuns: 2000 })
  })

  it('builds the usual shapes whole: nested objects, arrays by index, repeated keys', () => {
    const parse = createUrlencodedParse(resolveUrlencoded({ extended: true }, resolveCommon(undefined, 'x/y')))
    const text = 'order%5Bid%5D=1&order%5Bitems%5D%5B1%5D%5Bsku%5D=B&order%5Bitems%5D%5B0%5D%5Bsku%5D=A+1&order[tag]=x&order%5btag%5d=y&n=caf%C3%A9&n=%E0'
    assert.deepEqual(parse(text, 'utf-8'), { order: { id: '1', items: [{ sku: 'A 1' }, { sku: 'B' }], tag: ['x', 'y'] }, n: ['café', '%E0'] })
    assert.deepEqual(parse(text, 'utf-8'), reference(text, 'utf-8', { extended: true, depth: 32, parameterLimit: 1000, charsetSentinel: false, interpretNumericEntities: false }))
  })
})

describe('urlencoded() prototype keys, at the object level', () => {
  it('drops __proto__ keys without ever setting the prototype, repeated or not', () => {
    for (const extended of [false, true]) {
      const parse = createUrlencodedParse(resolveUrlencoded({ extended }, resolveCommon({}, 'x/y')))
      for (const body of ['__proto__=a&__proto__=b', '__proto__=a', '__proto__[x]=1&__proto__[x]=2', 'a=1&__proto__=b&__proto__=c']) {
        const value = parse(body, 'utf-8') as Record<string, unknown>
        assert.equal(Object.getPrototypeOf(value), Object.prototype, body)
        assert.equal(Object.hasOwn(value, '__proto__'), false, body)
        assert.deepEqual(value, reference(body, 'utf-8', { extended, depth: 32, parameterLimit: 1000, charsetSentinel: false, interpretNumericEntities: false }))
      }
    }
  })
})

// The value, and the order of its keys at every level (which deepEqual does not compare).
function outcome (fn: () => unknown): unknown {
  try {
    const value = fn()
    return { value, order: keyOrder(value) }
  } catch (err) {
    return { refused: (err as { status?: number }).status ?? 'error' }
  }
}

function keyOrder (value: unknown): unknown {
  if (value === null || typeof value !== 'object') return null
  return Object.keys(value).map((key) => [key, keyOrder((value as Record<string, unknown>)[key])])
}

// body-parser 2.4's call of qs, for comparison
function reference (body: string, charset: string, options: { extended: boolean, depth: number, parameterLimit: number, charsetSentinel: boolean, interpretNumericEntities: boolean }): unknown {
  if (body.length === 0) return {}
  const count = body.split('&').length
  if (count > options.parameterLimit) throw Object.assign(new Error('too many'), { status: 413 })
  try {
    return qs.parse(body, {
      allowPrototypes: true,
      arrayLimit: options.extended ? Math.max(100, count) : count,
      depth: options.extended ? options.depth : 0,
      charsetSentinel: options.charsetSentinel,
      interpretNumericEntities: options.interpretNumericEntities,
      charset: charset as 'utf-8',
      parameterLimit: options.parameterLimit,
      strictDepth: true
    })
  } catch (err) {
    if (err instanceof RangeError) throw Object.assign(new Error('depth'), { status: 400 })
    throw err
  }
}
