// A real node:http server on port 0 running a chain of connect-style middlewares, and a small
// client for it. Raw-socket helpers live beside it for malformed and aborted requests.
import { createServer, request as httpRequest } from 'node:http'
import type { IncomingHttpHeaders, IncomingMessage, Server, ServerOptions, ServerResponse } from 'node:http'
import { connect as netConnect } from 'node:net'
import type { AddressInfo, Socket } from 'node:net'

export type Next = (err?: unknown) => void
export type Middleware = (req: IncomingMessage, res: ServerResponse, next: Next) => void
export type Handler = (req: IncomingMessage, res: ServerResponse) => void
export type ErrorHandler = (err: unknown, req: IncomingMessage, res: ServerResponse) => void

export interface TestServer {
  server: Server
  port: number
  url: string
  close: () => Promise<void>
}

/** Runs `middlewares` in order, like connect, then `handler`; an error goes to `onError`. */
export function chain (middlewares: Middleware[], handler: Handler, onError: ErrorHandler = defaultOnError): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    let i = 0
    const next: Next = (err) => {
      if (err !== undefined && err !== null) { onError(err, req, res); return }
      const mw = middlewares[i++]
      if (mw === undefined) { handler(req, res); return }
      try { mw(req, res, next) } catch (e) { onError(e, req, res) }
    }
    next()
  }
}

function defaultOnError (err: unknown, _req: IncomingMessage, res: ServerResponse): void {
  const e = err as { status?: number, type?: string, message?: string }
  res.statusCode = typeof e.status === 'number' ? e.status : 500
  res.setHeader('content-type', 'text/plain')
  res.end(`[${e.type ?? ''}] ${e.message ?? String(err)}`)
}

/** Starts a node:http server on a free port of 127.0.0.1; `options` are node:http's ServerOptions. */
export async function startServer (listener: (req: IncomingMessage, res: ServerResponse) => void, options: ServerOptions = {}): Promise<TestServer> {
  const server = createServer(options, listener)
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const port = (server.address() as AddressInfo).port
  return {
    server,
    port,
    url: `http://127.0.0.1:${port}`,
    close: async () => {
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => { resolve() }))
    }
  }
}

export interface Reply {
  status: number
  headers: IncomingHttpHeaders
  body: string
}

export interface RequestOptions {
  method?: string
  path?: string
  headers?: Record<string, string | number | string[]>
  /** The body, written in one piece, or as these chunks one after another. */
  body?: string | Buffer | Array<string | Buffer>
}

/** Sends one request and resolves with the whole reply. */
export async function request (port: number, options: RequestOptions = {}): Promise<Reply> {
  return await new Promise((resolve, reject) => {
    const req = httpRequest({
      host: '127.0.0.1',
      port,
      method: options.method ?? (options.body === undefined ? 'GET' : 'POST'),
      path: options.path ?? '/',
      headers: options.headers ?? {},
      agent: false
    }, (res) => {
      const chunks: Buffer[] = []
      res.on('data', (c: Buffer) => chunks.push(c))
      res.on('end', () => {
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks).toString('utf8') })
      })
      res.on('error', reject)
    })
    req.on('error', reject)
    const body = options.body
    if (Array.isArray(body)) for (const chunk of body) req.write(chunk)
    else if (body !== undefined) req.write(body)
    req.end()
  })
}

/** Opens a raw TCP socket to the server, for requests node:http would refuse to send. */
export async function rawSocket (port: number): Promise<Socket> {
  return await new Promise((resolve, reject) => {
    const socket = netConnect(port, '127.0.0.1', () => { resolve(socket) })
    socket.once('error', reject)
  })
}

/** Writes `data` on a raw socket and resolves with everything the server sends until it closes. */
export async function rawRequest (port: number, data: string | Buffer): Promise<string> {
  const socket = await rawSocket(port)
  return await new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    socket.on('data', (c: Buffer) => chunks.push(c))
    socket.on('end', () => { resolve(Buffer.concat(chunks).toString('latin1')) })
    socket.on('error', reject)
    socket.write(data)
  })
}
