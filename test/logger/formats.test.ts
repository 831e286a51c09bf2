// The predefined formats, byte for byte as morgan 1.12 writes them: every format is run beside
// morgan on the same requests and the two lines compared.
import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { promisify } from 'node:util'
import { logger } from '../../src/index.js'
import { answer, compareWithMorgan, LineCollector, maskClock, morgan, serve, watchWarnings } from '../helpers/logger-lines.js'
import { rawRequest, rawSocket, request } from '../helpers/server.js'
import type { Middleware } from '../helpers/server.js'

const run = promisify(execFile)

const basic = (user: string): string => 'Basic ' + Buffer.from(`${user}:secret`).toString('base64')

// The same requests for every format: a plain GET, a full one, an error without a body length.
const scenarios = [
  {
    name: 'a plain GET',
    send: async (port: number) => await request(port, { path: '/' }),
    handler: answer(200, 'ok')
  },
  {
    name: 'a request with user, referrer, user agent and a response length',
    send: async (port: number) => await request(port, {
      method: 'POST',
      path: '/items?sort=asc',
      headers: { authorization: basic('ada'), referer: 'http://example.com/page', 'user-agent': 'agent/1.0 (x)' },
      body: 'hello'
    }),
    handler: answer(201, 'created', { 'content-type': 'text/plain' })
  },
  {
    name: 'a 404 sent with chunked encoding (no content length)',
    send: async (port: number) => await request(port, { path: '/missing', headers: { referrer: 'http://other.example/' } }),
    handler: answer(404, '', { 'transfer-encoding': 'chunked' })
  },
  {
    name: 'an HTTP/1.0 request',
    send: async (port: number) => await rawRequest(port, 'GET /old HTTP/1.0\r\nUser-Agent: old/0.9\r\n\r\n'),
    handler: answer(200, 'ok')
  }
]

for (const format of ['combined', 'common', 'short', 'tiny']) {
  describe(`the ${format} format`, () => {
    for (const scenario of scenarios) {
      it(`writes what morgan writes for ${scenario.name}`, async () => {
        const { ours, theirs } = await compareWithMorgan(format, scenario.send, { handler: scenario.handler })
        assert.equal(ours, theirs)
      })
    }
  })
}

describe('the combined format', () => {
  it('is the Apache combined log line', async () => {
    const { ours } = await compareWithMorgan('combined', async (port) => await request(port, {
      path: '/a?b=c',
      headers: { authorization: basic('ada'), referer: 'http://example.com/', 'user-agent': 'agent/1' }
    }), { handler: answer(200, 'hello') })
    assert.equal(maskClock(ours), '127.0.0.1 - ada [<clf>] "GET /a?b=c HTTP/1.1" 200 5 "http://example.com/" "agent/1"')
  })
})

describe('the short and tiny formats', () => {
  it('end with the response time in milliseconds', async () => {
    const { ours } = await compareWithMorgan('tiny', async (port) => await request(port, { path: '/t' }))
    assert.match(ours, /^GET \/t 200 2 - \d+\.\d{3} ms$/)
  })
})

describe('the legacy default format', () => {
  it('is combined with the web date, as in morgan', async () => {
    const watch = watchWarnings()
    try {
      const { ours, theirs } = await compareWithMorgan('default', async (port) => await request(port, { path: '/d', headers: { 'user-agent': 'ua' } }))
      assert.equal(ours, theirs)
      assert.equal(maskClock(ours), '127.0.0.1 - - [<web>] "GET /d HTTP/1.1" 200 2 "-" "ua"')
    } finally {
      watch.stop()
    }
  })

  it('is deprecated, with a warning naming the combined format', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', '-e', `
      const { logger } = require('./src/index.ts')
      process.on('warning', (w) => console.log(w.name + ': ' + w.message))
      logger('default', { stream: { write () {} } })
    `])
    assert.match(stdout, /DeprecationWarning: foyer\/logger: default format: use combined format/)
  })

  it('is logger.default, read with the warning and assigned to redefine it, as morgan.default', async () => {
    // (in a process of its own: assigning it redefines the format for every logger made later)
    const { stdout } = await run(process.execPath, ['--import', 'tsx', '-e', `
      const http = require('node:http')
      const { logger } = require('./src/index.ts')
      const morgan = require('morgan')
      process.on('warning', (w) => console.log(w.name + ': ' + w.message))
      console.log('same text ' + (logger.default === morgan.default))
      logger.default = ':method :url default'
      morgan.default = ':method :url default'
      const lines = []
      const ours = logger({ stream: { write (l) { lines.push('ours ' + l) } } })
      const theirs = morgan({ stream: { write (l) { lines.push('theirs ' + l) } } })
      const server = http.createServer((req, res) => ours(req, res, () => theirs(req, res, () => res.end('ok'))))
      server.listen(0, '127.0.0.1', async () => {
        await (await fetch('http://127.0.0.1:' + server.address().port + '/d')).text()
        setTimeout(() => { for (const line of lines.sort()) process.stdout.write(line); server.close() }, 50)
      })
    `])
    assert.match(stdout, /same text true/)
    assert.match(stdout, /DeprecationWarning: foyer\/logger: default format: use combined format/)
    assert.match(stdout, /^ours GET \/d default\ntheirs GET \/d default\n/m)
  })
})

describe('the dev format', () => {
  // 1xx: status 150 cannot be read by node's client, a raw socket reads it.
  const statuses = [150, 200, 204, 302, 304, 404, 418, 500, 503]
  for (const status of statuses) {
    it(`colours a ${status} as morgan does`, async () => {
      const { ours, theirs } = await compareWithMorgan('dev', async (port) => await rawRequest(port, 'GET /s HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'), {
        handler: answer(status, status === 204 || status === 304 || status < 200 ? '' : 'body')
      })
      assert.equal(ours, theirs)
    })
  }

  it('is green for 2xx, cyan for 3xx, yellow for 4xx, red for 5xx and plain for 1xx', async () => {
    const expected: Record<number, number> = { 150: 0, 200: 32, 302: 36, 404: 33, 500: 31 }
    for (const [status, color] of Object.entries(expected)) {
      const { ours } = await compareWithMorgan('dev', async (port) => await rawRequest(port, 'GET /c HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'), {
        handler: answer(Number(status), Number(status) < 200 ? '' : 'abc')
      })
      const length = Number(status) < 200 ? '-' : '3'
      assert.match(ours, new RegExp(`^\\x1b\\[0mGET /c \\x1b\\[${color}m${status}\\x1b\\[0m \\d+\\.\\d{3} ms - ${length}\\x1b\\[0m$`))
    }
  })

  it('shows an aborted request uncoloured, with - for status, time and length, as morgan does', async () => {
    const { ours, theirs } = await compareWithMorgan('dev', async (port) => {
      const socket = await rawSocket(port)
      socket.write('GET /gone HTTP/1.1\r\nHost: x\r\n\r\n')
      await new Promise((resolve) => setTimeout(resolve, 30))
      socket.destroy()
    }, { handler: () => { /* never answers */ } })
    assert.equal(ours, theirs)
    assert.equal(ours, '\x1b[0mGET /gone \x1b[0m-\x1b[0m - ms - -\x1b[0m')
  })

  it('has no escape sequences when NO_COLOR is set, like morgan, and logger.dev is a function as morgan.dev is', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'test/logger/fixtures/dev-lines.ts'], { env: { ...process.env, NO_COLOR: '1' } })
    const { ours, theirs, kinds } = JSON.parse(stdout) as { ours: string[], theirs: string[], kinds: unknown }
    assert.deepEqual(kinds, { ours: 'function', theirs: 'function' })
    assert.deepEqual(ours, theirs)
    assert.equal(ours.length, 2)
    assert.match(ours[0] ?? '', /^GET \/404 404 \d+\.\d{3} ms - 4\n$/)
    assert.match(ours[1] ?? '', /^GET \/500 500 \d+\.\d{3} ms - 4\n$/)
  })

  it('is coloured when NO_COLOR is empty, like morgan', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'test/logger/fixtures/dev-lines.ts'], { env: { ...process.env, NO_COLOR: '' } })
    const { ours, theirs } = JSON.parse(stdout) as { ours: string[], theirs: string[] }
    assert.deepEqual(ours, theirs)
    // eslint-disable-next-line no-control-regex -- the colour codes are the subject
    assert.match(ours[0] ?? '', /^\x1b\[0mGET \/404 \x1b\[33m404\x1b\[0m/)
  })
})

describe('logger.format(name, format)', () => {
  it('registers a format string under a name, and returns the logger', async () => {
    assert.equal(logger.format('method-and-url', ':method :url'), logger)
    const out = new LineCollector()
    const server = await serve([logger('method-and-url', { stream: out }) as Middleware], answer())
    try {
      await request(server.port, { path: '/named' })
      assert.deepEqual(await out.waitForLines(1), ['GET /named'])
    } finally {
      await server.close()
    }
  })

  it('registers a format function under a name', async () => {
    logger.format('shout', (tokens, req, res) => `${tokens.method(req, res) ?? ''}!`)
    const out = new LineCollector()
    const server = await serve([logger('shout', { stream: out }) as Middleware], answer())
    try {
      await request(server.port, { path: '/' })
      assert.deepEqual(await out.waitForLines(1), ['GET!'])
    } finally {
      await server.close()
    }
  })

  it('falls back to the name itself for a name registered with an empty format, as morgan does', async () => {
    const lineOf = async (make: (stream: LineCollector) => Middleware): Promise<string[]> => {
      const out = new LineCollector()
      const server = await serve([make(out)], answer())
      try {
        await request(server.port, { path: '/' })
        return await out.waitForLines(1)
      } finally {
        await server.close()
      }
    }
    morgan.format('empty-format', '')
    logger.format('empty-format', '')
    const theirs = await lineOf((stream) => morgan('empty-format', { stream }))
    assert.deepEqual(theirs, ['empty-format'])
    assert.deepEqual(await lineOf((stream) => logger('empty-format', { stream }) as Middleware), theirs)
  })

  it('replaces a format of the same name', async () => {
    logger.format('replaced', ':method')
    logger.format('replaced', ':url')
    const out = new LineCollector()
    const server = await serve([logger('replaced', { stream: out }) as Middleware], answer())
    try {
      await request(server.port, { path: '/second' })
      assert.deepEqual(await out.waitForLines(1), ['/second'])
    } finally {
      await server.close()
    }
  })

  it('shows the predefined format strings on the logger, as morgan does', () => {
    const shown = logger as unknown as Record<string, unknown>
    assert.equal(shown.combined, ':remote-addr - :remote-user [:date[clf]] ":method :url HTTP/:http-version" :status :res[content-length] ":referrer" ":user-agent"')
    assert.equal(shown.tiny, ':method :url :status :res[content-length] - :response-time ms')
  })

  it('throws a TypeError for a name that is not a string or a format that is neither string nor function', () => {
    assert.throws(() => logger.format(1 as unknown as string, ':url'), { name: 'TypeError', message: 'argument name must be a string' })
    assert.throws(() => logger.format('x', 42 as unknown as string), { name: 'TypeError', message: 'argument format must be a string or a function' })
  })
})
