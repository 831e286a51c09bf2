// Reading a body without middleware: await a reader in a plain node:http handler.
import { createServer } from 'node:http'
import { readJson, readText } from 'foyer'

const server = createServer(async (req, res) => {
  res.setHeader('content-type', 'application/json')
  try {
    // A reader resolves undefined when there is no body or its type is not its own, and leaves the
    // body unread for the next one. The value comes from the client: check it before use.
    const body = await readJson(req, { limit: '1mb' }) ?? await readText(req)
    res.end(JSON.stringify({ received: body ?? null }))
  } catch (err) {
    // the error the json() middleware would pass to next: an HTTP status and a machine-readable type
    res.statusCode = err.status ?? 500
    res.end(JSON.stringify({ type: err.type ?? 'internal' }))
  }
})

server.listen(Number(process.env.PORT ?? 3000), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}`)
})
