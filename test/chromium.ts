/**
 * Headless Chromium (Debian's, driven by playwright-core) for the tests of self-contained pages: a page that
 * records every request leaving file:/data:/about: (and aborts it) and every script error.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';

export const CHROMIUM = process.env.MCPBENCH_CHROMIUM ?? '/usr/bin/chromium';

/** For `test(name, { skip: chromiumMissing() }, ...)`. */
export function chromiumMissing(): string | false {
  return existsSync(CHROMIUM) ? false : `Chromium not found at ${CHROMIUM}: install Debian's chromium (CI does) or set MCPBENCH_CHROMIUM`;
}

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Requests that tried to leave the page. */
  outside: string[];
  /** Uncaught errors and console errors. */
  errors: string[];
  close(): Promise<void>;
}

export async function openChromium(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  const userDataDir = mkdtempSync(join(tmpdir(), 'mcpbench-chromium-'));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update'],
    viewport: { width: 1280, height: 900 },
  });
  const outside: string[] = [];
  const errors: string[] = [];
  const local = (url: string) => url.startsWith('file:') || url.startsWith('data:') || url.startsWith('about:');
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (local(url)) return route.continue();
    outside.push(url);
    return route.abort();
  });
  context.on('request', (request) => {
    if (!local(request.url())) outside.push(request.url());
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.on('pageerror', (error) => errors.push(error.message));
  page.on('console', (message) => {
    if (message.type() === 'error') errors.push(message.text());
  });
  return {
    context,
    page,
    outside,
    errors,
    close: async () => {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}
