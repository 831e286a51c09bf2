// The runnable examples start and answer as their comments say. They load the built package
// (`npm run build` first, as `npm test` does).
import { spawn } from 'node:child_process'
import type { ChildProcess } from 'node:child_process'
import { describe, it, after } from 'node:test'
import assert from 'node:assert/strict'
import { gzipSync } from 'node:zlib'

interface Running { url: string, child: ChildProcess, output: () => string }

async function start (file: string): Promise<Running> {
  const child = spawn(process.execPath, [file], { env: { ...process.env, PORT: '0', NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  child.stdout?.on('data', (c: Buffer) => { out += c.toString() })
  child.stderr?.on('data', (c: Buffer) => { out += c.toString() })
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => { reject(new Error(`${file} did not start: ${out}`)) }, 10_000)
    child.stdout?.on('data', () => {
      const m = /listening on (http:\/\/\S+)/.exec(out)
      if (m?.[1] !== undefined) { clearTimeout(timer); resolve(m[1]) }
    })
    child.on('exit', (code) => { clearTimeout(timer); reject(new Error(`${file} exited ${String(code)}: ${out}`)) })
  })
  return { url, child, output: () => out }
}

async function waitFor (check: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !check(); i++) await new Promise((resolve) => setTimeout(resolve, 20))
}

/** POSTs `body` with the given Content-Type (and any other headers). */
async function post (url: string, type: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<Response> {
  return await fetch(url, { method: 'POST', headers: { 'content-type': type, ...headers }, body })
}

const running: Running[] = []
after(() => { for (const r of running) r.child.kill() })

describe('examples/demo.mjs', () => {
  it('answers with the parser that matched and the parsed body, and logs in the dev format', async () => {
    const demo = await start('examples/demo.mjs')
    running.push(demo)
    let res = await post(`${demo.url}/items`, 'application/json', '{"name":"tea"}')
    assert.equal(res.status, 200)
    assert.deepEqual(await res.json(), { method: 'POST', url: '/items', parser: 'json', body: { name: 'tea' } })

    res = await post(`${demo.url}/form`, 'application/x-www-form-urlencoded', 'a[b]=1&c=2')
    assert.deepEqual(await res.json(), { method: 'POST', url: '/form', parser: 'urlencoded', body: { a: { b: '1' }, c: '2' } })

    res = await post(`${demo.url}/note`, 'text/plain', 'hello')
    assert.deepEqual(await res.json(), { method: 'POST', url: '/note', parser: 'text', body: 'hello' })

    res = await post(`${demo.url}/gz`, 'application/json', gzipSync('{"zipped":true}'), { 'content-encoding': 'gzip' })
    assert.deepEqual(await res.json(), { method: 'POST', url: '/gz', parser: 'json', body: { zipped: true } })

    res = await post(`${demo.url}/bad`, 'application/json', '{"a":')
    assert.equal(res.status, 400)
    const err = await res.json() as { error: { status: number, type: string } }
    assert.equal(err.error.status, 400)
    assert.equal(err.error.type, 'entity.parse.failed')

    await waitFor(() => demo.output().includes('POST /bad 400'))
    assert.match(demo.output(), /^POST \/items 200 [\d.]+ ms - \d+$/m)
    assert.match(demo.output(), /^POST \/bad 400 [\d.]+ ms - \d+$/m)
  })
})

describe('examples/node-http.mjs', () => {
  it('parses JSON and logs a combined line', async () => {
    const app = await start('examples/node-http.mjs')
    running.push(app)
    const res = await post(app.url, 'application/json', '[1,2]')
    assert.deepEqual(await res.json(), { received: [1, 2] })
    await waitFor(() => app.output().includes('"POST / HTTP/1.1" 200'))
    assert.match(app.output(), /^127\.0\.0\.1 - - \[[^\]]+\] "POST \/ HTTP\/1\.1" 200 - "-" "[^"]*"$/m)
  })
})

describe('examples/express.mjs', () => {
  it('parses per route and answers parser errors with their type', async () => {
    const app = await start('examples/express.mjs')
    running.push(app)
    let res = await post(`${app.url}/api/items`, 'application/json', '{"id":7}')
    assert.deepEqual(await res.json(), { item: { id: 7 } })
    res = await post(`${app.url}/login`, 'application/x-www-form-urlencoded', 'user=ada')
    assert.equal(await res.text(), 'hello ada\n')
    // nothing parsed (another content type): req.body is undefined
    res = await post(`${app.url}/login`, 'application/json', '{"user":"ada"}')
    assert.equal(await res.text(), 'hello nobody\n')
    res = await post(`${app.url}/api/items`, 'application/json', '{')
    assert.equal(res.status, 400)
    assert.deepEqual(await res.json(), { type: 'entity.parse.failed' })
  })
})

describe('examples/connect.mjs', () => {
  it('parses forms and text', async () => {
    const app = await start('examples/connect.mjs')
    running.push(app)
    let res = await post(app.url, 'application/x-www-form-urlencoded', 'x[]=1&x[]=2')
    assert.deepEqual(await res.json(), { body: { x: ['1', '2'] } })
    res = await post(app.url, 'text/html', '<p>hi</p>')
    assert.deepEqual(await res.json(), { body: '<p>hi</p>' })
  })
})

describe('examples/promise-node-http.mjs', () => {
  it('awaits JSON, then text, and answers reader errors with their type', async () => {
    const app = await start('examples/promise-node-http.mjs')
    running.push(app)
    let res = await post(app.url, 'application/json', '{"a":[1,2]}')
    assert.deepEqual(await res.json(), { received: { a: [1, 2] } })
    res = await post(app.url, 'text/plain', 'hello')
    assert.deepEqual(await res.json(), { received: 'hello' })
    res = await post(app.url, 'application/json', '{')
    assert.equal(res.status, 400)
    assert.deepEqual(await res.json(), { type: 'entity.parse.failed' })
  })
})

describe('examples/koa.mjs', () => {
  it('reads JSON and nested forms, and answers reader errors with their type', async () => {
    const app = await start('examples/koa.mjs')
    running.push(app)
    let res = await post(app.url, 'application/json', gzipSync('{"zipped":true}'), { 'content-encoding': 'gzip' })
    assert.deepEqual(await res.json(), { received: { zipped: true } })
    res = await post(app.url, 'application/x-www-form-urlencoded', 'a[b]=1')
    assert.deepEqual(await res.json(), { received: { a: { b: '1' } } })
    res = await post(app.url, 'application/json; charset=latin1', '{}')
    assert.equal(res.status, 415)
    assert.deepEqual(await res.json(), { type: 'charset.unsupported' })
  })
})

describe('examples/fastify.mjs', () => {
  it('parses JSON and forms with foyer, and answers parser errors with their type', async () => {
    const app = await start('examples/fastify.mjs')
    running.push(app)
    let res = await post(`${app.url}/items`, 'application/json', '{"id":7}')
    assert.deepEqual(await res.json(), { item: { id: 7 } })
    res = await post(`${app.url}/items`, 'application/x-www-form-urlencoded', 'id=8')
    assert.deepEqual(await res.json(), { item: { id: '8' } })
    res = await post(`${app.url}/items`, 'application/json', '{"__proto__":{"admin":true}}')
    assert.equal(res.status, 400)
    assert.deepEqual(await res.json(), { type: 'entity.parse.failed' })
    res = await post(`${app.url}/items`, 'text/plain', 'id=9')
    assert.equal(res.status, 415)
    assert.deepEqual(await res.json(), { type: 'FST_ERR_CTP_INVALID_MEDIA_TYPE' })
  })
})

describe('examples/hono.mjs', () => {
  it('reads a Fetch Request\'s JSON and text, and answers reader errors with their type', async () => {
    const app = await start('examples/hono.mjs')
    running.push(app)
    let res = await post(`${app.url}/items`, 'application/json', gzipSync('{"name":"tea"}'), { 'content-encoding': 'gzip' })
    assert.deepEqual(await res.json(), { item: { name: 'tea' } })
    res = await fetch(`${app.url}/notes`, { method: 'POST', body: 'remember' })
    assert.deepEqual(await res.json(), { note: 'remember' })
    res = await post(`${app.url}/items`, 'application/json', '[1,')
    assert.equal(res.status, 400)
    assert.deepEqual(await res.json(), { type: 'entity.parse.failed' })
  })
})

describe('examples/json-logs.mjs', () => {
  it('writes one JSON object per line, with the bytes a streamed response sent', async () => {
    const app = await start('examples/json-logs.mjs')
    running.push(app)
    const res = await fetch(`${app.url}/hi?x=1`, { headers: { 'x-tenant': 'acme' } })
    assert.equal(await res.text(), 'hello from a stream\n')
    await waitFor(() => app.output().split('\n').filter((l) => l.startsWith('{')).length >= 2)
    const lines = app.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>)
    const standard = lines.find((l) => 'httpVersion' in l)
    const custom = lines.find((l) => 'tenant' in l)
    assert.equal(standard?.method, 'GET')
    assert.equal(standard?.url, '/hi?x=1')
    assert.equal(standard?.status, 200)
    assert.equal(typeof standard?.responseTimeMs, 'number')
    assert.equal(custom?.request, 'GET /hi?x=1')
    assert.equal(custom?.bytes, 20)
    assert.equal(custom?.tenant, 'acme')
  })
})
