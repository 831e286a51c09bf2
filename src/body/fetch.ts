// WHATWG Fetch `Request` bodies (Node.js, Hono, Next.js route handlers, Bun, Deno) through the
// same pipeline as Node.js requests: the body's ReadableStream is adapted into a Node.js Readable
// carrying the request's headers, and `type` and `verify` are shown the Request itself.
import { Readable } from 'node:stream'
import { isUint8Array } from 'node:util/types'
import { streamNotReadable } from './errors.js'
import type { BodyError } from './errors.js'
import { asAbort, kBegin, passOn, readBody } from './read.js'
import type { BodyHeaders, ReadOptions } from './read.js'

/** One read from a Fetch body's reader. */
export interface FetchBodyChunk {
  done: boolean
  value?: Uint8Array | undefined
}

/** The reader of a Fetch body: the part of `ReadableStreamDefaultReader` the readers use. */
export interface FetchBodyReader {
  read (): Promise<FetchBodyChunk>
  cancel (reason?: unknown): Promise<void>
  /** Not called: a body refused by its headers is never taken. Kept so that a reader written with it fits. */
  releaseLock? (): void
}

/** A Fetch body: the part of `ReadableStream<Uint8Array>` the readers use. */
export interface FetchBody {
  readonly locked: boolean
  getReader (): FetchBodyReader
}

/**
 * A WHATWG Fetch `Request`, as the readers see it: the global `Request` of Node.js, Bun and
 * Deno, Hono's `c.req.raw`, and Next.js's `NextRequest` all fit. Declared by shape, so a Request
 * typed by the DOM library, by undici or by a runtime is accepted alike.
 */
export interface FetchRequest {
  readonly headers: { get (name: string): string | null }
  readonly body: FetchBody | null
  readonly bodyUsed: boolean
  /** Aborted when the client goes away (Hono on Node.js, Next.js, Bun, Deno): the read stops there. */
  readonly signal?: FetchSignal | undefined
}

/** The part of an `AbortSignal` the readers use. */
export interface FetchSignal {
  readonly aborted: boolean
  addEventListener (type: 'abort', listener: () => void): void
  removeEventListener (type: 'abort', listener: () => void): void
}

/**
 * Whether `req` is a Fetch Request rather than a Node.js one: its headers have get(), and it says
 * whether its body was used. (A mock of a node request may give its headers a get() too.)
 */
export function isFetchRequest (req: unknown): req is FetchRequest {
  const candidate = req as { headers?: { get?: unknown }, bodyUsed?: unknown } | null | undefined
  return typeof candidate?.headers?.get === 'function' && typeof candidate.bodyUsed === 'boolean'
}

/**
 * The settings as the pipeline will use them for this Request: a `type` function and `verify`
 * (as resolved into `settings`) are called with the Request and no response, not with the stream
 * the pipeline reads.
 */
export function settingsForFetch (settings: ReadOptions, request: FetchRequest): ReadOptions {
  const { typeFunction, verify } = settings
  if (typeFunction === undefined && verify === undefined) return settings
  const adapted: ReadOptions = { ...settings }
  if (typeFunction !== undefined) adapted.matches = () => typeFunction(request)
  if (verify !== undefined) {
    adapted.verify = (_source: unknown, _res: unknown, buf: Buffer, encoding: string | null) => {
      verify(request, undefined, buf, encoding)
    }
  }
  return adapted
}

interface Settle {
  resolve: (body: unknown) => void
  reject: (err: BodyError) => void
}

/**
 * Reads a Fetch Request's body with resolved options: undefined when it has no body or another
 * type, and the pipeline's errors otherwise. The options must come from `settingsForFetch`.
 */
export async function readFetchBody (request: FetchRequest, options: ReadOptions): Promise<unknown> {
  const body = request.body
  if (body === null || body === undefined) return undefined
  const source = new FetchBodySource(request, body)
  if (!options.matches(source)) return undefined
  // a body that was read (or is being read) cannot be read again: the Fetch form of a consumed stream
  if (request.bodyUsed || body.locked) throw streamNotReadable()
  // The pipeline takes the body (see FetchBodySource's kBegin) in this same call, once its
  // headers are checked, not at the first read a tick later: a reader started in the meantime (a
  // `request.json()` in the same tick) must find it taken, not take it from us.
  return await new Promise((resolve, reject) => {
    readBody(source, undefined, options, settle, { resolve, reject })
  })
}

function settle (err: BodyError | null, body: unknown, source: FetchBodySource, arg: Settle): void {
  // The pipeline lets a body it gave up on drain into nothing; a Fetch body is cancelled instead,
  // which tells its source (a client connection, a file) that the rest is not wanted. A body the
  // pipeline refused by its headers was never taken, like one whose type does not match.
  source.destroy()
  if (err !== null) arg.reject(err)
  else arg.resolve(body)
}

/** A Fetch body as a Node.js Readable with the request's headers: what the pipeline reads. */
class FetchBodySource extends Readable {
  readonly headers: BodyHeaders
  readonly #request: FetchRequest
  readonly #body: FetchBody
  #signal: FetchSignal | undefined
  #reader: FetchBodyReader | undefined
  readonly #onAbort = (): void => {
    if (this.destroyed) return
    this.destroy(asAbort(new Error('aborted')))
  }

  constructor (request: FetchRequest, body: FetchBody) {
    super()
    const headers = request.headers
    this.headers = {
      'content-type': headers.get('content-type') ?? undefined,
      'content-encoding': headers.get('content-encoding') ?? undefined,
      'content-length': headers.get('content-length') ?? undefined
    }
    this.#request = request
    this.#body = body
  }

  /**
   * Takes the body's reader, once the pipeline has checked the headers: a body they refuse is
   * never locked, and stays readable by another reader (Bun leaves a body whose reader was
   * released marked as used). A body that cannot be taken is reported as not readable.
   */
  [kBegin] (): void {
    let reader: FetchBodyReader | undefined
    try {
      reader = this.#body.getReader()
    } catch {
      throw streamNotReadable()
    }
    // (an object shaped like a Request may give no reader at all)
    if (reader === null || typeof reader !== 'object') throw streamNotReadable()
    this.#reader = reader
    // A client that goes away aborts the signal; a body that then neither ends nor fails would
    // hold the read forever. The read stops there with 400 request.aborted, as a broken stream does.
    // A signal aborted before the read (the client left while the handler awaited something else)
    // fires no event any more: it stops the read as soon as it starts. (The signal is read only
    // here, for a body being read: Deno warns once about its abort semantics when it is read.)
    try {
      const signal = this.#request.signal
      if (signal === null || typeof signal?.addEventListener !== 'function') return
      signal.addEventListener('abort', this.#onAbort)
      this.#signal = signal
      // (a promise job rather than process.nextTick, which a test's fake timers may hold)
      if (signal.aborted) Promise.resolve().then(this.#onAbort)
    } catch {
      // a signal shaped by hand that cannot be listened to: the read goes on without it
    }
  }

  override _read (): void {
    const reader = this.#reader
    if (this.destroyed || reader === undefined) return
    try {
      // (an object shaped like a Request may give a reader that throws, or a result that is not
      // a promise: the read fails as when its promise rejects)
      Promise.resolve(reader.read()).then((chunk) => {
        try {
          this.#onChunk(chunk)
        } catch (err) {
          // a result whose `done` or `value` throws
          this.destroy(bodyStreamError(err))
        }
      }, (err: unknown) => { this.destroy(bodyStreamError(err)) })
    } catch (err) {
      this.destroy(bodyStreamError(err))
    }
  }

  #onChunk (chunk: FetchBodyChunk): void {
    if (this.destroyed) return
    if (chunk === null || typeof chunk !== 'object') {
      // no read result at all (from a reader shaped by hand): the server's mistake, as below
      this.destroy(passOn(streamNotReadable()))
    } else if (chunk.done) {
      this.push(null)
    } else {
      this.#onBytes(chunk.value)
    }
  }

  #onBytes (value: unknown): void {
    if (!isUint8Array(value)) {
      // A body stream must give bytes, as Node.js's own request.text() insists: a string, an
      // ArrayBuffer or no value at all is the server's mistake, a 500, not the client's abort.
      this.destroy(passOn(streamNotReadable()))
    } else if (value.byteLength === 0) {
      // an empty push would stall a paused stream: ask for the next chunk instead
      this._read()
    } else {
      this.push(value)
    }
  }

  override _destroy (err: Error | null, callback: (err?: Error | null) => void): void {
    // Nothing here may throw: the stream would emit what it threw as an 'error' that no one
    // listens to any more (the read has settled), and the process would end. What an object
    // shaped like a Request does wrong (a signal, a reader or its methods that throw) is let go.
    try {
      this.#signal?.removeEventListener('abort', this.#onAbort)
    } catch {}
    const reader = this.#reader
    if (reader !== undefined) {
      // The read settles at once, as for a body over the limit: a cancel that never settles (the
      // branch of a body split by request.clone(), which is cancelled only once the other branch
      // is read or cancelled too) must not hold it. Cancelling a body that has ended is a no-op.
      // (A body refused by its headers was never taken: see kBegin.)
      try {
        Promise.resolve(reader.cancel(err ?? undefined)).then(undefined, () => {})
      } catch {}
    }
    callback(err)
  }
}

/**
 * What a body stream's failure is to the pipeline: the client going away (undici's 'terminated',
 * a socket reset, the signal's abort), a 400 request.aborted; but an error carrying a `status` or
 * a `type` of its own is a verdict on the body (a stream the app made, one passing on another's
 * error), passed on as from a Node.js stream.
 */
function bodyStreamError (err: unknown): Error {
  try {
    if (typeof err === 'object' && err !== null) {
      // an Error or any other object, as a node stream's 'error' passes either on
      const own = err as { status?: unknown, type?: unknown }
      const verdict = typeof own.status === 'number' || typeof own.type === 'string'
      // the stream's destroy() reads it
      Reflect.get(err, 'stack')
      if (verdict) return err as Error
      if (err instanceof Error) return asAbort(err)
    }
    return asAbort(toError(err))
  } catch {
    // a getter or Proxy that throws: the read must still settle
    return asAbort(new Error('the body stream failed'))
  }
}

// Whatever the body stream failed with, even a value String() refuses (an object with no
// prototype) or a Proxy that throws: an exception here would leave the read unsettled.
function toError (err: unknown): Error {
  try {
    return err instanceof Error ? err : new Error(String(err))
  } catch {
    return new Error('the body stream failed')
  }
}
