// logger.compile: format strings become functions that walk a list of literal text and token
// calls. No format string is ever turned into code (CVE-2019-5413).
import { describe, it, mock } from 'node:test'
import assert from 'node:assert/strict'
import type { IncomingMessage, ServerResponse } from 'node:http'
import fc from 'fast-check'
import { logger } from '../../src/index.js'
import type { TokenIndexer } from '../../src/index.js'
import { parseFormat } from '../../src/logger/compile.js'
import { answer, LineCollector, morgan, serve } from '../helpers/logger-lines.js'
import { loadCopy } from '../helpers/realm.js'
import { request } from '../helpers/server.js'
import type { Middleware } from '../helpers/server.js'

const req = {} as IncomingMessage
const res = {} as ServerResponse

/** A token table where every name answers with its own name and argument. */
const echo = new Proxy({}, {
  get: (_target, name) => typeof name === 'string'
    ? (_req: unknown, _res: unknown, arg?: string) => arg === undefined ? `<${name}>` : `<${name}|${arg}>`
    : undefined
}) as unknown as TokenIndexer

describe('logger.compile(format)', () => {
  it('returns a function that writes the literal text and each token value', () => {
    const fn = logger.compile('a :method b :url[x] c')
    assert.equal(fn(echo, req, res), 'a <method> b <url|x> c')
  })

  it('reads token names of two or more word characters or dashes, as morgan does', () => {
    const fn = logger.compile(':a :ab :a-b_c9:next')
    assert.equal(fn(echo, req, res), ':a <ab> <a-b_c9><next>')
  })

  it('passes everything up to the closing bracket as the argument, spaces included', () => {
    assert.equal(logger.compile(':req[x y z]!')(echo, req, res), '<req|x y z>!')
  })

  it('keeps an empty pair of brackets as text', () => {
    assert.equal(logger.compile(':req[]')(echo, req, res), '<req>[]')
  })

  it('keeps an unknown token as written, where morgan threw on the first request', () => {
    const fn = logger.compile('at 10:30 :no-such-token[x] :method')
    assert.equal(fn(logger as unknown as TokenIndexer, { method: 'GET' } as IncomingMessage, res), 'at 10:30 :no-such-token[x] GET')
  })

  it('works with the logger itself as the token table, as morgan.compile(f)(morgan, req, res) does', () => {
    logger.token('constant', () => 'c')
    assert.equal(logger.compile('[:constant]')(logger as unknown as TokenIndexer, req, res), '[c]')
  })

  it('sees a token defined, or defined again, after the format was compiled and used', () => {
    const fn = logger.compile('[:compile-later] [:compile-redefined]')
    const table = logger as unknown as TokenIndexer
    logger.token('compile-redefined', () => 'first')
    assert.equal(fn(table, req, res), '[:compile-later] [first]')
    logger.token('compile-later', () => 'now')
    logger.token('compile-redefined', () => 'second')
    assert.equal(fn(table, req, res), '[now] [second]')
  })

  it('looks tokens up in whichever table each call gives, and sees definitions made between calls', () => {
    const fn = logger.compile('[:method] [:compile-switch]')
    const own = { method: () => 'own-method', 'compile-switch': () => 'own-switch' } as unknown as TokenIndexer
    const table = logger as unknown as TokenIndexer
    const registered = (logger as unknown as Record<symbol, TokenIndexer>)[Symbol.for('foyer.logger.tokens')] as TokenIndexer
    const req = { method: 'GET' } as IncomingMessage
    logger.token('compile-switch', () => 'first')
    assert.equal(fn(table, req, res), '[GET] [first]')
    assert.equal(fn(own, req, res), '[own-method] [own-switch]')
    assert.equal(fn(registered, req, res), '[GET] [first]')
    logger.token('compile-switch', () => 'second')
    assert.equal(fn(registered, req, res), '[GET] [second]')
    assert.equal(fn(own, req, res), '[own-method] [own-switch]')
    logger.token('compile-switch', () => 'third')
    assert.equal(fn(table, req, res), '[GET] [third]')
  })

  it('escapes a built-in token replaced by one whose value needs it', () => {
    const fn = logger.compile(':date[clf]|:pid')
    const table = logger as unknown as TokenIndexer
    const builtin = { date: table.date, pid: table.pid }
    try {
      logger.token('date', () => 'a\nb')
      logger.token('pid', () => '"x"')
      assert.equal(fn(table, req, res), 'a\\nb|\\"x\\"')
    } finally {
      logger.token('date', builtin.date)
      logger.token('pid', builtin.pid)
    }
    assert.match(fn(table, req, res), /^\d\d\/\w{3}\/\d{4}:\d\d:\d\d:\d\d \+0000\|\d+$/)
  })

  it('calls a replaced :req or :res token with the argument as written, and escapes its value', () => {
    const fn = logger.compile(':req[X-Id]|:res[Content-Type]')
    const table = logger as unknown as TokenIndexer
    const builtin = { req: table.req, res: table.res }
    const req = { headers: { 'x-id': 'a"b' } } as unknown as IncomingMessage
    const res = { headersSent: true, getHeader: (name: string) => name.toLowerCase() === 'content-type' ? 'text/plain' : undefined } as unknown as ServerResponse
    assert.equal(fn(table, req, res), 'a\\"b|text/plain')
    try {
      logger.token('req', (_req, _res, arg) => `req(${String(arg)})`)
      logger.token('res', (_req, _res, arg) => `res(${String(arg)})\n`)
      assert.equal(fn(table, req, res), 'req(X-Id)|res(Content-Type)\\n')
    } finally {
      logger.token('req', builtin.req)
      logger.token('res', builtin.res)
    }
    assert.equal(fn(table, req, res), 'a\\"b|text/plain')
  })

  it('prints - for a token that gives undefined, null, an empty string, 0 or false', () => {
    const values: Record<string, unknown> = { u: undefined, n: null, e: '', z: 0, f: false, t: true, one: 1 }
    const table = new Proxy({}, { get: (_t, name) => typeof name === 'string' ? () => values[name.slice(1)] : undefined }) as unknown as TokenIndexer
    assert.equal(logger.compile(':xu :xn :xe :xz :xf :xt :xone')(table, req, res), '- - - - - true 1')
  })

  it('throws a TypeError for anything but a string, with morgan\'s message', () => {
    for (const bad of [undefined, null, 42, {}, [], () => 'x', Symbol('s')]) {
      assert.throws(() => logger.compile(bad as unknown as string), { name: 'TypeError', message: 'argument format must be a string' })
    }
  })

  it('never runs a format string as code', async () => {
    const marker = globalThis as { pwned?: boolean }
    const attacks = [
      '" + (globalThis.pwned = true) + "',
      "' + (globalThis.pwned = true) + '",
      // eslint-disable-next-line no-template-curly-in-string -- a template literal is the attack
      '`${globalThis.pwned = true}`',
      ':method[" + (globalThis.pwned = true) + "]',
      ':url\\"); globalThis.pwned = true; ("',
      '\u2028globalThis.pwned = true\u2029',
      '*/ globalThis.pwned = true /*'
    ]
    for (const format of attacks) {
      const fn = logger.compile(format)
      fn(echo, req, res)
      assert.equal(marker.pwned, undefined, format)
    }
    // the text stays text
    assert.equal(logger.compile(attacks[0] as string)(echo, req, res), attacks[0])
    // and the bracketed text is an argument like any other
    assert.equal(logger.compile(attacks[3] as string)(echo, req, res), '<method|" + (globalThis.pwned = true) + ">')
  })

  it('produces the same text as morgan\'s compile for any format (property)', () => {
    const alphabet = fc.constantFrom('a', 'b', 'Z', '0', '-', '_', ':', ':', '[', ']', ' ', '"', '\\', '\n', 'é', '\u2028', '{', '}', '$', '`', "'")
    fc.assert(fc.property(fc.array(alphabet, { maxLength: 40 }).map((a) => a.join('')), (format) => {
      // morgan hands a bracketed argument to the token in its JSON-escaped spelling; only
      // arguments where that spelling is the text itself are compared.
      fc.pre(parseFormat(format).every((p) => typeof p === 'string' || p.arg === undefined || !/["\\\n\u2028]/.test(p.arg)))
      assert.equal(logger.compile(format)(echo, req, res), morgan.compile(format)(echo, req, res))
    }), { numRuns: 500 })
  })
})

describe('lines that repeat', () => {
  // A run of calls whose values usually repeat (date, method, status, ...) is kept as one string
  // with its literals and used again while every value in it is the same. What a line says
  // must never depend on the lines before it.
  const REPEATING = [':date', ':method', ':status', ':http-version', ':remote-user', ':pid']

  /** A token table answering each name with the value that line gives it. */
  function tableOf (values: () => Record<string, unknown>): TokenIndexer {
    return new Proxy({}, {
      get: (_t, name) => typeof name === 'string' ? () => values()[name] : undefined
    }) as unknown as TokenIndexer
  }

  it('gives every line morgan\'s text, whatever the lines before it were (property)', () => {
    const piece = fc.oneof(fc.constantFrom(...REPEATING, ':url', ':status', ':method'), fc.constantFrom(' ', '"', '-', '[', '] ', 'x'))
    // Few values, so that lines repeat; 0 and '' print as -, a number as its digits.
    const value = fc.constantFrom<unknown>('GET', 'POST', '200', '404', '', undefined, 0, 201, 'a b')
    const names = ['date', 'method', 'status', 'http-version', 'remote-user', 'pid', 'url']
    const line = fc.record(Object.fromEntries(names.map((name) => [name, value])))
    fc.assert(fc.property(fc.array(piece, { minLength: 1, maxLength: 12 }), fc.array(line, { minLength: 1, maxLength: 12 }), (pieces, lines) => {
      const format = pieces.join('')
      const ours = logger.compile(format)
      const theirs = morgan.compile(format)
      let current: Record<string, unknown> = {}
      const table = tableOf(() => current)
      for (const values of lines) {
        current = values
        assert.equal(ours(table, req, res), theirs(table, req, res), `${format} with ${JSON.stringify(values)}`)
      }
    }), { numRuns: 300 })
  })

  it('turns a value that is not a string into text on every line, as morgan does', () => {
    let calls = 0
    const counter = { toString: () => `n${++calls}` }
    const fn = logger.compile('[:method :status]')
    const table = tableOf(() => ({ method: 'GET', status: counter }))
    assert.equal(fn(table, req, res), '[GET n1]')
    assert.equal(fn(table, req, res), '[GET n2]')
    assert.equal(calls, 2)
  })

  it('is not left half made by a token that throws', () => {
    const fn = logger.compile(':method :status')
    let current: Record<string, unknown> = { method: 'GET', status: '200' }
    const table = new Proxy({}, {
      get: (_t, name) => typeof name !== 'string'
        ? undefined
        : name === 'status'
          ? () => { if (current.status === 'throw') throw new Error('token failed'); return current.status }
          : () => current[name]
    }) as unknown as TokenIndexer
    assert.equal(fn(table, req, res), 'GET 200')
    current = { method: 'POST', status: 'throw' }
    assert.throws(() => fn(table, req, res), /token failed/)
    current = { method: 'POST', status: '200' }
    assert.equal(fn(table, req, res), 'POST 200')
    current = { method: 'GET', status: '200' }
    assert.equal(fn(table, req, res), 'GET 200')
  })

  it('makes a line of the same format inside one of its own tokens', () => {
    interface Nested { method: string, status?: string, inner?: Nested }
    const fn = logger.compile(':method :status')
    const table = {
      method: (r: Nested) => r.method,
      status: (r: Nested) => r.inner !== undefined ? `in(${fn(table as unknown as TokenIndexer, r.inner as unknown as IncomingMessage, res)})` : r.status
    }
    const call = (r: Nested): string => fn(table as unknown as TokenIndexer, r as unknown as IncomingMessage, res)
    assert.equal(call({ method: 'GET', inner: { method: 'PUT', status: '201' } }), 'GET in(PUT 201)')
    assert.equal(call({ method: 'PUT', status: 'in(PUT 201)' }), 'PUT in(PUT 201)')
    assert.equal(call({ method: 'PUT', status: '201' }), 'PUT 201')
  })
})

describe('parsing a format', () => {
  it('gives back the format when its parts are put together (property)', () => {
    fc.assert(fc.property(fc.string({ maxLength: 60 }), (format) => {
      const text = parseFormat(format).map((p) => typeof p === 'string' ? p : p.source).join('')
      assert.equal(text, format)
    }), { numRuns: 500 })
  })

  it('is linear: a long run of colons and brackets compiles at once', () => {
    const started = Date.now()
    logger.compile(':' + '-'.repeat(100_000) + '[' + 'x'.repeat(100_000))
    logger.compile(':ab['.repeat(50_000))
    assert.ok(Date.now() - started < 2000)
  })
})

describe('compiled formats in a logger', () => {
  it('can be used as a format function', async () => {
    const compiled = logger.compile(':method :url')
    const out = new LineCollector()
    const server = await serve([logger(compiled, { stream: out }) as Middleware], answer())
    try {
      await request(server.port, { path: '/compiled' })
      assert.deepEqual(await out.waitForLines(1), ['GET /compiled'])
    } finally {
      await server.close()
    }
  })
})

describe('a compiled format given tokens of the caller\'s making', () => {
  it('takes each token from the object it is given, made from the token table or a Proxy of it, as morgan does', async () => {
    // A format function that redacts the URL through a token of its own must never log it.
    type Tokens = Record<string | symbol, unknown>
    const redacting = (lib: { compile: (format: string) => unknown }, make: (tokens: Tokens) => Tokens) => {
      const compiled = lib.compile(':method :url :status') as (tokens: Tokens, req: IncomingMessage, res: ServerResponse) => string
      return (tokens: Tokens, req: IncomingMessage, res: ServerResponse): string => compiled(make(tokens), req, res)
    }
    const makers: Array<(tokens: Tokens) => Tokens> = [
      (tokens) => Object.assign(Object.create(tokens) as Tokens, { url: () => '/redacted' }),
      (tokens) => new Proxy(tokens, { get: (target, name) => name === 'url' ? () => '/redacted' : target[name] })
    ]
    for (const make of makers) {
      // the token of the object made is that object's own: the other format still sees the URL
      const lines = await sideBySide((lib) => redacting(lib, make) as never)
      assert.deepEqual(lines, [['GET /redacted 200', '/secret?token=abc'], ['GET /redacted 200', '/secret?token=abc']])
    }
  })

  type Tokens = Record<string, unknown>
  type Lib = { compile: (format: string) => unknown, token: (name: string, fn: (...args: never[]) => unknown) => unknown }
  type Compiled = (tokens: Tokens, req: IncomingMessage, res: ServerResponse) => string

  /**
   * The lines foyer and morgan write for one request with the format function `make(lib)` gives,
   * each followed by the line of a ':url' logger mounted after it.
   */
  async function sideBySide (make: (lib: Lib) => (tokens: Tokens, req: IncomingMessage, res: ServerResponse) => string): Promise<string[][]> {
    const lines: string[][] = []
    for (const lib of [logger, morgan] as unknown as Lib[]) {
      const format = make(lib)
      const out = new LineCollector()
      const log = lib === (logger as unknown) ? logger(format as never, { stream: out }) : morgan(format, { stream: out })
      const plain = new LineCollector()
      const after = lib === (logger as unknown) ? logger(':url', { stream: plain }) : morgan(':url', { stream: plain })
      const server = await serve([log as Middleware, after as Middleware], answer())
      try {
        await request(server.port, { path: '/secret?token=abc' })
        lines.push([...await out.waitForLines(1), ...await plain.waitForLines(1)])
      } finally {
        await server.close()
      }
    }
    return lines
  }

  /** The format function for `lib` that puts `fn` on the table under `name` while it makes a line of `format`. */
  function putting (format: string, name: string, fn: () => unknown): (lib: Lib) => (tokens: Tokens, req: IncomingMessage, res: ServerResponse) => string {
    return (lib) => {
      const compiled = lib.compile(format) as Compiled
      return (tokens, req, res) => {
        const before = tokens[name]
        tokens[name] = fn
        try {
          return compiled(tokens, req, res)
        } finally {
          tokens[name] = before
        }
      }
    }
  }

  it('calls a token put on the tokens object a format function receives, as morgan does: compiled formats call it too', async () => {
    const lines = await sideBySide((lib) => {
      const compiled = lib.compile(':method :url :status :assigned') as Compiled
      return (tokens, req, res) => {
        const url = tokens.url
        tokens.url = () => '/redacted'
        tokens.assigned = () => 'by hand'
        try {
          // the table holds what was put there
          assert.equal(tokens.assigned, tokens.assigned)
          return compiled(tokens, req, res) + ' | ' + (tokens.url as (req: IncomingMessage, res: ServerResponse) => string)(req, res)
        } finally {
          tokens.url = url
          delete tokens.assigned
        }
      }
    })
    // put back, the token is the built-in one again
    const expected = ['GET /redacted 200 by hand | /redacted', '/secret?token=abc']
    assert.deepEqual(lines, [expected, expected])
    assert.equal(logger.compile(':assigned')(logger as never, {} as never, {} as never), ':assigned')
  })

  it('calls a token deleted and put back, or mocked by node:test on the tokens object, as morgan does', async () => {
    const redefined = await sideBySide((lib) => {
      const compiled = lib.compile(':method :url') as Compiled
      return (tokens, req, res) => {
        const url = tokens.url
        delete tokens.url
        tokens.url = () => '/put-back'
        try {
          return compiled(tokens, req, res)
        } finally {
          tokens.url = url
        }
      }
    })
    assert.deepEqual(redefined, [['GET /put-back', '/secret?token=abc'], ['GET /put-back', '/secret?token=abc']])
    const mocked = await sideBySide((lib) => {
      const compiled = lib.compile(':method :url') as Compiled
      return (tokens, req, res) => {
        const method = mock.method(tokens as { method: () => string }, 'method', () => 'MOCKED')
        try {
          return compiled(tokens, req, res) + ' ' + String(method.mock.callCount())
        } finally {
          method.mock.restore()
        }
      }
    })
    assert.deepEqual(mocked, [['MOCKED /secret?token=abc 1', '/secret?token=abc'], ['MOCKED /secret?token=abc 1', '/secret?token=abc']])
  })

  it('escapes the value of a token put on the tokens object by hand, and of a safe built-in token replaced that way', async () => {
    const lines = await sideBySide(putting(':method :status', 'status', () => '200\nGET /forged 200'))
    // (morgan writes the value of a function put in by hand raw: its line is split in two)
    assert.deepEqual(lines[0], ['GET 200\\nGET /forged 200', '/secret?token=abc'])
    const date = await sideBySide(putting(':date[clf]', 'date', () => '"forged"'))
    assert.equal(date[0]?.[0], '\\"forged\\"')
  })

  it('keeps a value other than a function put on the tokens object as a token no one defined', async () => {
    const lines = await sideBySide(() => {
      return (tokens) => {
        const method = tokens.method
        tokens.method = undefined
        try {
          return 'x ' + String(tokens.method)
        } finally {
          tokens.method = method
        }
      }
    })
    assert.deepEqual(lines, [['x undefined', '/secret?token=abc'], ['x undefined', '/secret?token=abc']])
    const compiled = logger.compile(':method :url')
    const table = (logger as unknown as Record<symbol, Tokens>)[Symbol.for('foyer.logger.tokens')] as Tokens
    const method = table.method
    table.method = 'not a function'
    try {
      assert.equal(compiled(logger as never, { method: 'GET', url: '/u', originalUrl: '/u' } as never, {} as never), ':method /u')
    } finally {
      table.method = method
    }
    assert.equal(compiled(logger as never, { method: 'GET', url: '/u', originalUrl: '/u' } as never, {} as never), 'GET /u')
  })

  it('checks the value of a function put on the table in place of a safe token in a json line', async () => {
    const forged = 'x"}\n{"forged":true,"y":"'
    const json = logger.json({ time: ':date[clf]', rt: ':response-time', pid: ':pid' })
    const lines = await sideBySide((lib) => lib === (logger as unknown)
      ? (tokens, req, res) => {
          const date = tokens.date
          const responseTime = tokens['response-time']
          tokens.date = () => forged
          tokens['response-time'] = () => '1,"evil":"2'
          try {
            return json(tokens as never, req, res)
          } finally {
            tokens.date = date
            tokens['response-time'] = responseTime
          }
        }
      : () => 'morgan has no json lines')
    const line = lines[0]?.[0] as string
    const parsed = JSON.parse(line) as Record<string, unknown>
    assert.equal(parsed['time'], forged)
    assert.equal(parsed['rt'], '1,"evil":"2')
    assert.equal(parsed['pid'], process.pid)
  })

  it('calls a function put on the table in a json field made of several tokens', async () => {
    const json = logger.json({ line: ':method :url', url: ':url' })
    const lines = await sideBySide((lib) => lib === (logger as unknown)
      ? (tokens, req, res) => {
          const url = tokens.url
          tokens.url = () => '/redacted"'
          try {
            return json(tokens as never, req, res)
          } finally {
            tokens.url = url
          }
        }
      : () => 'morgan has no json lines')
    assert.deepEqual(JSON.parse(lines[0]?.[0] as string), { line: 'GET /redacted"', url: '/redacted"' })
  })

  it('keeps the table of a line while a token logs a line of the same format with another table, as morgan does', async () => {
    for (const shape of ['text', 'json'] as const) {
      const lines = await sideBySide((lib) => {
        const inner: string[] = []
        let format: Compiled
        if (shape === 'text' || lib !== (logger as unknown)) {
          format = lib.compile(':nested-line :url :method') as Compiled
        } else {
          const json = logger.json({ nested: ':nested-line', url: ':url', method: ':method' })
          format = (tokens, req, res) => json(tokens as never, req, res)
        }
        lib.token('nested-line', function (this: Tokens, req: IncomingMessage, res: ServerResponse) {
          // only the outermost line makes a nested one
          if (inner.length > 0) return 'inner'
          inner.push('')
          const other = Object.assign(Object.create(this) as Tokens, { url: () => '/INNER', method: () => 'INNER' })
          inner[0] = format(other, req, res)
          return 'outer'
        } as never)
        return (tokens, req, res) => {
          inner.length = 0
          const line = format(tokens, req, res)
          return `${line} | ${inner[0] ?? ''}`
        }
      })
      if (shape === 'text') {
        const expected = ['outer /secret?token=abc GET | inner /INNER INNER', '/secret?token=abc']
        assert.deepEqual(lines, [expected, expected])
      } else {
        const [outerLine, innerLine] = (lines[0]?.[0] as string).split(' | ')
        assert.deepEqual(JSON.parse(outerLine as string), { nested: 'outer', url: '/secret?token=abc', method: 'GET' })
        assert.deepEqual(JSON.parse(innerLine as string), { nested: 'inner', url: '/INNER', method: 'INNER' })
      }
    }
  })

  it('calls a function put on the table when the registry was made by an earlier copy that did not show its wrappers', () => {
    // An earlier copy's registry: the same fields, without the map from wrappers to functions.
    const first = loadCopy('src/index.ts') as { logger: typeof logger }
    const registry = (first.logger as unknown as Record<symbol, Tokens>)[Symbol.for('foyer.logger.tokens')] as Tokens
    const earlierRaw = Object.create(null) as Tokens
    const firstRaw = registry[Symbol.for('foyer.logger.rawTokens') as unknown as string] as Tokens
    for (const name of Object.keys(firstRaw)) earlierRaw[name] = firstRaw[name]
    Object.defineProperty(earlierRaw, Symbol.for('foyer.logger.tokensVersion'), { value: { count: 0 } })
    const earlierTokens = Object.create(null) as Tokens
    for (const name of Object.keys(registry)) earlierTokens[name] = registry[name]
    Object.defineProperty(earlierTokens, Symbol.for('foyer.logger.rawTokens'), { value: earlierRaw })
    const unwrapped = new WeakMap<object, unknown>()
    for (const name of Object.keys(registry)) unwrapped.set(registry[name] as object, firstRaw[name])
    const earlier = { tokens: earlierTokens, rawTokens: earlierRaw, formats: Object.create(null) as Tokens, unwrapped }
    const later = loadCopy('src/index.ts', true, { [Symbol.for('foyer.logger.registry')]: earlier }) as { logger: typeof logger }
    const compiled = later.logger.compile(':method :url')
    const request = { method: 'GET', url: '/real', originalUrl: '/real' } as never
    assert.equal(compiled(later.logger as never, request, {} as never), 'GET /real')
    earlierTokens.url = () => '/put-in"'
    // defined again: the format looks its tokens up again, and finds the one put in by hand
    later.logger.token('nested-other', () => 'x')
    assert.equal(compiled(later.logger as never, request, {} as never), 'GET /put-in\\"')
    // another token's wrapper put in its place is escaped once
    earlierTokens.url = earlierTokens['user-agent']
    assert.equal(compiled(later.logger as never, { ...request as object, headers: { 'user-agent': 'a"b\\c' } } as never, {} as never), 'GET a\\"b\\\\c')
  })

  it('sees a token defined again while its line is made, from a token before it, as morgan does', async () => {
    const lines = await sideBySide((lib) => {
      lib.token('compile-later', () => 'old')
      lib.token('compile-first', () => { lib.token('compile-later', () => 'new'); return 'first' })
      const compiled = lib.compile(':compile-first :compile-later') as Compiled
      return (tokens, req, res) => compiled(tokens, req, res)
    })
    assert.deepEqual(lines, [['first new', '/secret?token=abc'], ['first new', '/secret?token=abc']])
  })
})
