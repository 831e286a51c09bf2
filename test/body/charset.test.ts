import { describe, it } from 'node:test'
import assert from 'node:assert/strict'
import fc from 'fast-check'
import { parse as parseContentType } from 'content-type'
import iconv from 'iconv-lite'
import { charsetAllowed, charsetKnown, decodeBody, headerCharset } from '../../src/body/charset.js'

describe('headerCharset', () => {
  it('reads the charset parameter, in lower case', () => {
    assert.equal(headerCharset('text/plain; charset=UTF-8'), 'utf-8')
    assert.equal(headerCharset('text/plain;charset="ISO-8859-1"'), 'iso-8859-1')
    assert.equal(headerCharset('text/plain; format=flowed; Charset=Latin1'), 'latin1')
  })

  it('gives \'\' when there is none', () => {
    assert.equal(headerCharset(undefined), '')
    assert.equal(headerCharset(''), '')
    assert.equal(headerCharset('text/plain'), '')
    assert.equal(headerCharset('text/plain; charset='), '')
  })

  it('gives the same answer from its cache as from a fresh parse', () => {
    const header = 'application/json; charset=UTF-16LE'
    assert.equal(headerCharset(header), 'utf-16le')
    assert.equal(headerCharset(header), 'utf-16le')
  })

  it('never throws, and agrees with content-type, for any header', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 80 }), (header) => {
      const expected = header === '' ? '' : (parseContentType(header).parameters.charset ?? '').toLowerCase()
      assert.equal(headerCharset(header), expected)
      assert.equal(headerCharset(header), expected)
    }), { numRuns: 2000 })
  })

  // Not timed: a parse that went back over the header for each parameter would take minutes on
  // this one (a linear one, milliseconds), and the test's timeout ends it.
  it('parses a header of 200,000 parameters', { timeout: 60_000 }, () => {
    const header = 'text/plain; ' + 'a=b; '.repeat(200_000) + 'charset=utf-8'
    assert.equal(headerCharset(header), 'utf-8')
  })
})

describe('charsetAllowed', () => {
  it('json takes only utf-* names (RFC 7159 8.1)', () => {
    for (const charset of ['utf-8', 'utf-16le', 'utf-32', 'utf-bogus']) assert.equal(charsetAllowed('unicode', charset), true)
    for (const charset of ['utf8', 'latin1', 'UTF-8', '']) assert.equal(charsetAllowed('unicode', charset), false)
  })

  it('urlencoded takes exactly utf-8 and iso-8859-1', () => {
    assert.equal(charsetAllowed('form', 'utf-8'), true)
    assert.equal(charsetAllowed('form', 'iso-8859-1'), true)
    for (const charset of ['utf8', 'latin1', 'UTF-8', 'utf-16']) assert.equal(charsetAllowed('form', charset), false)
  })

  it('text takes any name (the decoder decides)', () => {
    assert.equal(charsetAllowed('any', 'bogus'), true)
  })
})

describe('charsetKnown', () => {
  it('knows what iconv-lite knows, in any case', () => {
    for (const charset of ['utf-8', 'UTF-8', 'utf8', 'latin1', 'windows-1252', 'shift_jis', 'utf-16']) assert.equal(charsetKnown(charset), true)
  })

  it('does not know prototype names or made-up ones', () => {
    for (const charset of ['__proto__', 'constructor', 'toString', 'hasOwnProperty', 'valueOf', 'bogus', '']) {
      assert.equal(charsetKnown(charset), false, charset)
      assert.equal(charsetKnown(charset), false, `${charset} (cached)`)
    }
  })
})

describe('decodeBody', () => {
  it('decodes utf-8 exactly as iconv-lite does, replacement characters and byte order mark included', () => {
    const bytes = fc.array(fc.oneof(fc.integer({ min: 0, max: 255 }), fc.constantFrom(0xef, 0xbb, 0xbf, 0xc3, 0xe2, 0x80, 0xf0, 0x9f, 0xed, 0xa0)), { maxLength: 40 })
    fc.assert(fc.property(bytes, fc.boolean(), (list, bom) => {
      const buf = Buffer.from(bom ? [0xef, 0xbb, 0xbf, ...list] : list)
      assert.equal(decodeBody(buf, 'utf-8'), iconv.decode(buf, 'utf-8'))
      assert.equal(decodeBody(buf, 'utf8'), iconv.decode(buf, 'utf8'))
    }), { numRuns: 3000 })
  })

  it('drops only one byte order mark', () => {
    assert.equal(decodeBody(Buffer.from([0xef, 0xbb, 0xbf, 0xef, 0xbb, 0xbf, 0x41]), 'utf-8'), '\ufeffA')
  })

  it('hands other charsets to iconv-lite', () => {
    assert.equal(decodeBody(iconv.encode('déjà', 'utf-16be'), 'utf-16be'), 'déjà')
    assert.equal(decodeBody(Buffer.from([0xe9]), 'iso-8859-1'), 'é')
  })
})
