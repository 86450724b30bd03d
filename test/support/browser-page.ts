/**
 * A page in headless chromium on an origin of its own, for the browser
 * tests: a `node:http` app server (a blank page unless the test serves its
 * own), chromium launched by puppeteer, and a page opened on the app. When
 * no chromium binary is found, `chromium` is `undefined` and the suites skip,
 * saying why (SKIP_REASON).
 */
import { existsSync } from 'node:fs'
import { createServer, type RequestListener, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import puppeteer, { type Browser, type Page } from 'puppeteer-core'

const CANDIDATES = [process.env.CHROMIUM_PATH, '/usr/bin/chromium', '/usr/bin/chromium-browser', '/usr/bin/google-chrome']

/** The chromium binary the browser tests run, or `undefined` when none is installed. */
export const chromium = CANDIDATES.find((path): path is string => path !== undefined && path !== '' && existsSync(path))

/** Why the browser suites are skipped when {@link chromium} is `undefined`. */
export const SKIP_REASON = 'no chromium binary (looked for $CHROMIUM_PATH, /usr/bin/chromium, /usr/bin/chromium-browser, /usr/bin/google-chrome; `apt-get install chromium`)'

/** A page open on the app's origin. */
export interface AppPage {
  readonly page: Page
  readonly browser: Browser
  /** The app's origin, `http://127.0.0.1:PORT`. */
  readonly origin: string
  close(): Promise<void>
}

const BLANK: RequestListener = (_req, res) => res.end('<!doctype html><title>app</title>')

/** Starts the app server (`listener`, a blank page by default), launches chromium and opens a page on the app. */
export async function openAppPage(listener: RequestListener = BLANK): Promise<AppPage> {
  if (chromium === undefined) throw new Error(SKIP_REASON)
  const app: Server = createServer(listener)
  await new Promise<void>((resolve) => app.listen(0, '127.0.0.1', resolve))
  const origin = `http://127.0.0.1:${(app.address() as AddressInfo).port}`
  const browser = await puppeteer.launch({ executablePath: chromium, headless: true, args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu'] })
  const page = await browser.newPage()
  await page.goto(`${origin}/`)
  return {
    page,
    browser,
    origin,
    close: async () => {
      await browser.close()
      await new Promise((resolve) => app.close(resolve))
    },
  }
}
