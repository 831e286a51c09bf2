// Telling node:http2's compatibility requests and responses by shape, so that node:http2 is not
// loaded for servers that never use it: both carry the ServerHttp2Stream they wrap as `stream`.

/** Whether `message` is an http2 compat request or response: its `stream` can `respond()`. */
export function isHttp2Compat (message: object): boolean {
  const stream = (message as { stream?: unknown }).stream
  return typeof stream === 'object' && stream !== null && typeof (stream as { respond?: unknown }).respond === 'function'
}
