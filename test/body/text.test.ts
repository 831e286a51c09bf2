import { describe, it, before, after } from 'node:test'
import assert from 'node:assert/strict'
import bodyParser from 'body-parser'
import iconv from 'iconv-lite'
import { text } from '../../src/body/index.js'
import { compare, readResponse, requestHead, send, startBodyServer } from '../helpers/body-server.js'
import type { BodyServer, Seen } from '../helpers/body-server.js'
import { rawSocket } from '../helpers/server.js'

let server: BodyServer
before(async () => { server = await startBodyServer() })
after(async () => { await server.close() })

describe('text()', () => {
  it('reads a text/plain body into req.body as a string', async () => {
    const seen = await compare(server, text(), bodyParser.text(), { headers: { 'content-type': 'text/plain' }, body: 'user is tobi' })
    assert.equal(seen.body, 'user is tobi')
  })

  it('gives \'\' for an empty body', async () => {
    const seen = await compare(server, text(), bodyParser.text(), { headers: { 'content-type': 'text/plain' }, body: '' })
    assert.equal(seen.body, '')
  })

  it('skips other types by default', async () => {
    const seen = await compare(server, text(), bodyParser.text(), { headers: { 'content-type': 'text/html' }, body: '<p>' })
    assert.deepEqual(seen.body, { undefined: true })
  })

  it('takes other types with the type option', async () => {
    for (const type of ['text/html', 'text/*', ['text/html', 'text/csv'], 'html']) {
      const seen = await compare(server, text({ type }), bodyParser.text({ type: type as string }), { headers: { 'content-type': 'text/html; charset=utf-8' }, body: '<p>hi</p>' })
      assert.equal(seen.body, '<p>hi</p>')
    }
  })

  it('keeps the text exactly: no trimming, line ends as sent', async () => {
    const body = '  line one\r\nline two\n\ttabbed  '
    const seen = await compare(server, text(), bodyParser.text(), { headers: { 'content-type': 'text/plain' }, body })
    assert.equal(seen.body, body)
  })
})

describe('text() charset', () => {
  const samples: Array<[string, string]> = [
    ['utf-8', 'café € 日本'], ['utf-16le', 'café € 日本'], ['latin1', 'café'], ['iso-8859-1', 'café'],
    ['windows-1252', 'café €'], ['koi8-r', 'привет'], ['shift_jis', '日本語'], ['gb18030', '中文']
  ]
  for (const [charset, original] of samples) {
    it(`decodes ${charset} bodies`, async () => {
      const body = iconv.encode(original, charset)
      const seen = await compare(server, text(), bodyParser.text(), { headers: { 'content-type': `text/plain; charset=${charset}` }, body })
      assert.equal(seen.body, original)
    })
  }

  it('drops a byte order mark, as iconv-lite does', async () => {
    for (const [charset, bom] of [['utf-8', [0xef, 0xbb, 0xbf]], ['utf-16le', [0xff, 0xfe]]] as const) {
      const body = Buffer.concat([Buffer.from(bom), iconv.encode('hi', charset)])
      const seen = await compare(server, text(), bodyParser.text(), { headers: { 'content-type': `text/plain; charset=${charset}` }, body })
      assert.equal(seen.body, 'hi')
    }
  })

  /**
   * Sends `body` in two pieces, cut at `cut`: the second is written once the server has taken the
   * first from the connection, so the parser gets them one after the other.
   */
  async function sendInTwo (mw: unknown, charset: string, body: Buffer, cut: number): Promise<Seen> {
    let firstArrived = (): void => {}
    const arrived = new Promise<void>((resolve) => { firstArrived = resolve })
    const path = server.mount(mw, (req) => {
      const push = req.push
      req.push = function (chunk: unknown, encoding?: BufferEncoding) {
        if (chunk !== null) firstArrived()
        return push.call(this, chunk, encoding)
      }
    })
    const socket = await rawSocket(server.port)
    try {
      const reply = readResponse(socket)
      socket.write(Buffer.concat([Buffer.from(requestHead(path, { 'content-type': `text/plain; charset=${charset}`, 'content-length': body.length })), body.subarray(0, cut)]))
      await arrived
      socket.write(body.subarray(cut))
      const { status, body: seen } = await reply
      assert.equal(status, 200)
      return JSON.parse(seen) as Seen
    } finally {
      socket.destroy()
    }
  }

  it('decodes a multi-byte charset from the whole body, wherever the network cuts it', async () => {
    const cases: Array<[string, Buffer, number]> = [
      // a lead byte that ends the first piece, and a byte that cannot complete it
      ['shift_jis', Buffer.from([0x81, 0x21, 0x41]), 1],
      // no byte-order mark: the byte order is guessed from the text
      ['utf-16', iconv.encode('\u4e2d\u6587\u4e2d\u6587\u4e2d\u6587\u4e2d\u6587 and some ascii', 'utf-16be'), 16],
      ['utf-32', iconv.encode('\u{10000}'.repeat(6) + '","abcdefghijklmnop', 'utf-32be'), 32]
    ]
    for (const [charset, body, cut] of cases) {
      const whole = iconv.decode(body, charset)
      const ours = await sendInTwo(text(), charset, body, cut)
      assert.equal(ours.body, whole, charset)
      // body-parser decodes each piece as it arrives: the cut reached the parser
      const theirs = await sendInTwo(bodyParser.text(), charset, body, cut)
      assert.notEqual(theirs.body, whole, charset)
    }
  })

  it('reads the charset parameter in any case and quoted', async () => {
    const body = iconv.encode('café', 'latin1')
    for (const type of ['text/plain; charset=LATIN1', 'text/plain; Charset="latin1"', 'text/plain;charset=latin1;format=flowed']) {
      const seen = await compare(server, text(), bodyParser.text(), { headers: { 'content-type': type }, body })
      assert.equal(seen.body, 'café')
    }
  })

  it('uses defaultCharset when Content-Type names none', async () => {
    const body = iconv.encode('café', 'latin1')
    const seen = await compare(server, text({ defaultCharset: 'latin1' }), bodyParser.text({ defaultCharset: 'latin1' }), { headers: { 'content-type': 'text/plain' }, body })
    assert.equal(seen.body, 'café')
  })

  it('defaults to utf-8', async () => {
    const seen = await send(server, server.mount(text()), { headers: { 'content-type': 'text/plain' }, body: Buffer.from('café', 'utf8') })
    assert.equal(seen.body, 'café')
  })

  for (const charset of ['bogus', '__proto__', 'constructor', 'toString', 'hasOwnProperty']) {
    it(`415 charset.unsupported for charset=${charset}`, async () => {
      const seen = await compare(server, text(), bodyParser.text(), { headers: { 'content-type': `text/plain; charset=${charset}` }, body: 'x' })
      assert.equal(seen.error?.status, 415)
      assert.equal(seen.error?.type, 'charset.unsupported')
      assert.equal(seen.error?.message, `unsupported charset "${charset.toUpperCase()}"`)
      assert.deepEqual(seen.error?.props, { charset: charset.toLowerCase() })
    })
  }

  it('415 for an unknown defaultCharset, named in lower case', async () => {
    const seen = await compare(server, text({ defaultCharset: 'Bogus' }), bodyParser.text({ defaultCharset: 'Bogus' }), { headers: { 'content-type': 'text/plain' }, body: 'x' })
    assert.deepEqual(seen.error?.props, { charset: 'bogus' })
    assert.equal(seen.error?.message, 'unsupported charset "BOGUS"')
  })
})
