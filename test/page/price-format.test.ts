import fc from 'fast-check'
import { describe, expect, it } from 'vitest'
import { priceScale } from '../../src/adapters/http/udf/udf.js'
import { priceFormat } from '../../src/page/price-format.js'

describe("the chart page's price format", () => {
  it('takes the decimals of the pricescale /udf/symbols answers', () => {
    expect(priceFormat(100, 67_000)).toEqual({ pricescale: 100, precision: 2, minMove: 0.01 })
    expect(priceFormat(1_000_000, 0.9999)).toEqual({ pricescale: 1_000_000, precision: 6, minMove: 0.000001 })
    expect(priceFormat(1e9, 0.0001234)).toEqual({ pricescale: 1e9, precision: 9, minMove: 1e-9 })
  })

  it("without one (an older server), applies the server's rule to the price: the same decimals as /udf/symbols would give", () => {
    fc.assert(
      fc.property(fc.double({ min: 1e-12, max: 1e12, noNaN: true }), (price) => {
        expect(priceFormat(undefined, price).pricescale).toBe(priceScale(price))
      }),
    )
    expect(priceFormat(undefined, 1.00012).precision).toBe(5) // a stablecoin is not "1.00"
    expect(priceFormat(undefined, 0).precision).toBe(2)
    expect(priceFormat(Number.NaN, 3).precision).toBe(5)
  })
})
