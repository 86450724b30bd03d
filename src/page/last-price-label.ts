import type { IChartApi, ISeriesApi } from 'lightweight-charts'

/**
 * The last price, written on the chart at the height of its price line, at
 * the pane's left edge: never on the price axis (where lightweight-charts'
 * own last-value label covered the axis's labels) nor on the time axis.
 * Its text comes from the series' formatter, so it has the axis's decimals.
 */
export class LastPriceLabel {
  readonly #box: HTMLElement
  readonly #chart: IChartApi
  readonly #series: ISeriesApi<'Candlestick'>
  readonly #element = document.createElement('div')
  #price: number | undefined
  #frame = 0

  constructor(box: HTMLElement, chart: IChartApi, series: ISeriesApi<'Candlestick'>) {
    this.#box = box
    this.#chart = chart
    this.#series = series
    this.#element.id = 'last-price'
    this.#element.hidden = true
    box.append(this.#element)
    // The price line moves when the price scale does: on scrolling, zooming, resizing, and new data.
    chart.timeScale().subscribeVisibleLogicalRangeChange(() => this.#place())
    new ResizeObserver(() => this.#place()).observe(box)
  }

  /** The label's text, or `''` when there is no price to show. */
  get text(): string {
    return this.#price === undefined ? '' : (this.#element.textContent ?? '')
  }

  show(symbol: string, price: number): void {
    this.#price = price
    this.#element.textContent = `${symbol} ${this.#series.priceFormatter().format(price)}`
    this.#place()
  }

  hide(): void {
    this.#price = undefined
    this.#element.hidden = true
  }

  /** Placed after the chart has drawn the change (two frames: the chart draws in the next one), once per frame. */
  #place(): void {
    cancelAnimationFrame(this.#frame)
    this.#frame = requestAnimationFrame(() => {
      this.#frame = requestAnimationFrame(() => {
        const y = this.#price === undefined ? null : this.#series.priceToCoordinate(this.#price)
        if (y === null) {
          this.#element.hidden = true
          return
        }
        this.#element.hidden = false
        const height = this.#element.offsetHeight
        const pane = this.#box.clientHeight - this.#chart.timeScale().height()
        this.#element.style.top = `${Math.max(0, Math.min(pane - height, y - height / 2))}px`
      })
    })
  }
}
