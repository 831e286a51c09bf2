// Every error the parsers pass to `next`, in one place. Messages, statuses and extra properties are
// body-parser 2.4's (SPEC 7), so error handlers written for it keep working unchanged.
import createError from 'http-errors'

/** The `type` of every error the body parsers raise. */
export type BodyErrorType =
  | 'charset.unsupported'
  | 'encoding.unsupported'
  | 'entity.parse.failed'
  | 'entity.too.large'
  | 'entity.verify.failed'
  | 'parameters.too.many'
  | 'querystring.parse.rangeError'
  | 'request.aborted'
  | 'request.size.invalid'
  | 'stream.encoding.set'
  | 'stream.not.readable'

/**
 * The error a body parser passes to `next`, and a reader's promise rejects with: an
 * [http-errors](https://www.npmjs.com/package/http-errors) error, as body-parser's are. Which of the
 * optional properties it has depends on its `type` (see the README's error table).
 *
 * An error thrown by `verify` or by a json `reviver` is passed on itself, as body-parser does, with
 * `status`, `statusCode`, `expose`, `type` and `body` set; any other property it has is its own.
 */
export interface BodyError extends Error {
  /** The suggested response status: 4xx for the client's faults, 500 for the server's. */
  status: number
  /** The same as `status`. */
  statusCode: number
  /** Whether `message` may be shown to the client: true below 500. */
  expose: boolean
  /**
   * What went wrong, one of `BodyErrorType`; for an error thrown by `verify` or a `reviver`, its own
   * `type` when it has one (`entity.verify.failed` or `entity.parse.failed` otherwise).
   */
  type: BodyErrorType | (string & Record<never, never>)
  /** The body that failed: the bytes `verify` refused (a Buffer), or the text that did not parse. */
  body?: string | Buffer | undefined
  /** `charset.unsupported`: the charset refused; `encoding.unsupported` with `inflate: false`: the encoding. */
  charset?: string | undefined
  /** `encoding.unsupported`: the Content-Encoding refused. */
  encoding?: string | undefined
  /** `entity.too.large`: the limit in bytes. */
  limit?: number | undefined
  /** The declared Content-Length (`entity.too.large`, `request.size.invalid`); for `request.aborted`, the same as `expected`. */
  length?: number | null | undefined
  /**
   * The bytes received. `entity.too.large`: after inflation, or the encoded bytes of a compressed
   * body past its bound; `request.aborted` and `request.size.invalid`: as they came from the
   * client, before any inflation.
   */
  received?: number | undefined
  /**
   * The bytes the Content-Length announced. `request.aborted`: null when there is none, and for a
   * compressed body, whose Content-Length counts encoded bytes and is not checked.
   */
  expected?: number | null | undefined
  /** `request.aborted`: `'ECONNABORTED'`; corrupt compressed data: zlib's code (`'Z_DATA_ERROR'`). */
  code?: string | undefined
  /** Corrupt compressed data: zlib's error number. */
  errno?: number | undefined
}

// Every error below is made by http-errors and carries `type`: the shape of BodyError.
function raise (status: number, message: string, type: BodyErrorType, props?: Record<string, unknown>): BodyError {
  return createError(status, message, { ...props, type }) as BodyError
}

/**
 * 415 for a charset the parser refuses or the decoder does not know. body-parser shows the name in
 * upper case in the message; `charset` is the name as given when the parser refuses it, lower case
 * when the decoder does not know it.
 */
export function charsetUnsupported (charset: string): BodyError {
  return raise(415, `unsupported charset "${charset.toUpperCase()}"`, 'charset.unsupported', { charset })
}

/**
 * 415 for an encoded body while `inflate` is false. body-parser names the encoding in `encoding`;
 * SPEC 7 (and body-parser's README) name it `charset`: both are set.
 */
export function inflateDisabled (encoding: string): BodyError {
  return raise(415, 'content encoding unsupported', 'encoding.unsupported', { encoding, charset: encoding })
}

/** 415 for a Content-Encoding no decompressor exists for, stacked ones (`gzip, gzip`) included. */
export function encodingUnsupported (encoding: string): BodyError {
  return raise(415, `unsupported content encoding "${encoding}"`, 'encoding.unsupported', { encoding })
}

/** 413 when the declared Content-Length is over the limit: raised before any byte is read. */
export function declaredTooLarge (length: number, limit: number): BodyError {
  return raise(413, 'request entity too large', 'entity.too.large', { expected: length, length, limit })
}

/** 413 when the bytes received (after inflation) pass the limit. */
export function receivedTooLarge (received: number, limit: number): BodyError {
  return raise(413, 'request entity too large', 'entity.too.large', { limit, received })
}

/** 500: something called `req.setEncoding()`, so the stream yields strings, not the bytes. */
export function streamEncodingSet (): BodyError {
  return raise(500, 'stream encoding should not be set', 'stream.encoding.set')
}

/** 500: the request stream was destroyed or consumed by something else before the parser. */
export function streamNotReadable (): BodyError {
  return raise(500, 'stream is not readable', 'stream.not.readable')
}

/** 400 when the client goes away before the whole body arrived. */
export function requestAborted (received: number, expected: number | null): BodyError {
  return raise(400, 'request aborted', 'request.aborted', { code: 'ECONNABORTED', expected, length: expected, received })
}

/** 400 when the body ended at another length than its Content-Length declared. */
export function sizeInvalid (received: number, expected: number): BodyError {
  return raise(400, 'request size did not match content length', 'request.size.invalid', { expected, length: expected, received })
}

/**
 * 400 for a stream that failed while being read, typically corrupt or truncated compressed data.
 * The stream's own error is kept (its message, `code` and `errno` are body-parser's); body-parser
 * leaves `type` unset here, foyer files it under `entity.parse.failed` so every error has a type.
 */
export function streamFailed (err: unknown): BodyError {
  try {
    const error = createError(400, toThrowable(err)) as { type?: unknown }
    if (error.type === undefined) {
      // (a `type` that cannot be set, a getter's, is left as it is, as body-parser leaves every
      // type)
      try { error.type = 'entity.parse.failed' } catch {}
    }
    return error as BodyError
  } catch (failure) {
    return replaced(400, failure, { type: 'entity.parse.failed' })
  }
}

/** 413 when a form has more parameters than `parameterLimit`. */
export function parametersTooMany (): BodyError {
  return raise(413, 'too many parameters', 'parameters.too.many')
}

/** 400 when an extended form nests deeper than `depth`. */
export function depthExceeded (): BodyError {
  return raise(400, 'The input exceeded the depth', 'querystring.parse.rangeError')
}

/** 400 for a JSON body carrying a prototype-poisoning key (`onProtoPoisoning: 'error'`). */
export function protoPoisoned (key: string): BodyError {
  return raise(400, `JSON body contains a forbidden "${key}" key`, 'entity.parse.failed')
}

/**
 * 403 when `verify` throws. Like body-parser, the thrown error itself is passed on with `status`,
 * `body` and its own `type` (or `entity.verify.failed`).
 */
export function verifyFailed (thrown: unknown, body: Buffer): BodyError {
  return passOn(403, thrown, body, 'entity.verify.failed')
}

/** 400 when the body cannot be parsed; the parser's own error (a SyntaxError for JSON) is passed on. */
export function parseFailed (thrown: unknown, body: string | Buffer): BodyError {
  return passOn(400, thrown, body, 'entity.parse.failed')
}

/**
 * The error thrown by user code, given `status`, `body` and its own `type` or `fallbackType`, as
 * http-errors sets them. An error that cannot take them (frozen, sealed, a read-only `status`, a
 * getter or a Proxy that throws) is replaced by the TypeError its decoration threw, as
 * body-parser's reviver errors are when it cannot strip them: the app gets an error with a status
 * and a type, never a bare one.
 */
function passOn (status: number, thrown: unknown, body: Buffer | string, fallbackType: BodyErrorType): BodyError {
  try {
    return createError(status, toThrowable(thrown), { body, type: ownType(thrown) ?? fallbackType }) as BodyError
  } catch (failure) {
    return replaced(status, failure, { body, type: fallbackType })
  }
}

/** An http-errors error made of `failure`, what decorating a thrown value threw. */
function replaced (status: number, failure: unknown, props: Record<string, unknown>): BodyError {
  try {
    const replacement = failure instanceof Error && Object.isExtensible(failure) ? failure : new TypeError('the error thrown could not be passed on')
    return createError(status, replacement, props) as BodyError
  } catch {
    return createError(status, props) as BodyError
  }
}

function ownType (thrown: unknown): unknown {
  if (thrown === null || typeof thrown !== 'object') return undefined
  // body-parser reads `err.type || default`: a falsy type counts as none
  return (thrown as { type?: unknown }).type || undefined
}

// http-errors takes an Error, a message or a property bag; anything else thrown by user code
// (a number, null, undefined) would make it throw inside a stream listener, so it becomes a message.
function toThrowable (thrown: unknown): Error | string | Record<string, unknown> {
  if (thrown instanceof Error || typeof thrown === 'string') return thrown
  if (thrown !== null && typeof thrown === 'object') return thrown as Record<string, unknown>
  return String(thrown)
}
