// foyer's readers as Fastify's body parsers: the limits, inflation (gzip, br, deflate), charsets and
// errors of the middleware, in place of Fastify's own JSON and form parsing.
import Fastify from 'fastify'
import { readJson, readUrlencoded } from 'foyer'

const app = Fastify()

// A parser gets the request; the reader takes its Node.js request (`request.raw`), which carries
// the headers it needs. (A preParsing hook that replaces the payload stream is not seen.)
app.removeAllContentTypeParsers()
app.addContentTypeParser('application/json', (request) => readJson(request.raw, { limit: '1mb' }))
app.addContentTypeParser('application/x-www-form-urlencoded', (request) => readUrlencoded(request.raw))

app.post('/items', async (request) => ({ item: request.body ?? null }))

// foyer's errors carry an HTTP status and a machine-readable `type`; Fastify's own (a Content-Type
// no parser takes: 415) carry `statusCode` and `code`.
app.setErrorHandler((err, request, reply) => {
  reply.status(err.status ?? err.statusCode ?? 500).send({ type: err.type ?? err.code ?? 'internal' })
})

await app.listen({ port: Number(process.env.PORT ?? 3000), host: '127.0.0.1' })
console.log(`listening on http://127.0.0.1:${app.server.address().port}`)
