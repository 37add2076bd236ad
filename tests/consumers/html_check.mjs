// html_check.mjs: checks a page of `sonde report --format html` in headless Debian
// chromium through playwright-core.
// usage: node html_check.mjs NPMDIR FILE.html FLAT.csv SHOT.png
// NPMDIR: tests/consumers/npm.sh's directory (node_modules/playwright-core).
// It checks that the page renders without console errors, network requests or
// dialogs; that its sections are there; that the "Top functions" table holds the rows of
// FLAT.csv (`sonde report --format csv`, same options) in the same order; that the flame
// graph's frame (its own document) has drawn frames, and that clicking the top
// function's frame zooms it to full width; that the threads table is in ms and sorts by a
// column when its heading is clicked; then takes a full-page screenshot to SHOT.png. Prints one "ok" line, or "FAIL: ..." lines and
// exits 1.
import fs from 'node:fs'
import { createRequire } from 'node:module'

const [npmdir, htmlFile, csvFile, shot] = process.argv.slice(2)
if (!shot) {
  console.error('usage: node html_check.mjs NPMDIR FILE.html FLAT.csv SHOT.png')
  process.exit(2)
}
const require = createRequire(npmdir + '/')
const { chromium } = require('playwright-core')
const failures = []
const fail = (m) => failures.push(m)

// csv rows (no quoted commas in these tests' names)
const csv = fs.readFileSync(csvFile, 'utf8').trim().split('\n').map(l => l.split(','))

const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox'],
})
const page = await browser.newPage({ viewport: { width: 1280, height: 900 } })
page.on('console', m => { if (m.type() === 'error') fail('console: ' + m.text()) })
page.on('pageerror', e => fail('page error: ' + e))
page.on('dialog', async d => { fail('dialog: ' + d.message()); await d.dismiss() })
page.on('request', r => { if (!/^(file|data):/.test(r.url())) fail('network request: ' + r.url()) })
await page.goto('file://' + fs.realpathSync(htmlFile))
await page.waitForTimeout(300)

const info = await page.evaluate(() => {
  const sections = [...document.querySelectorAll('section')].map(s => s.id)
  const tables = {}
  for (const h of document.querySelectorAll('h3')) {
    const t = h.nextElementSibling && h.nextElementSibling.tagName === 'TABLE'
      ? h.nextElementSibling : h.nextElementSibling && h.nextElementSibling.nextElementSibling
    if (t && t.tagName === 'TABLE')
      tables[h.textContent] = [...t.rows].map(r => [...r.cells].map(c => c.textContent))
  }
  return { sections, tables, title: document.title }
})
for (const s of ['run', 'flame', 'functions', 'threads', 'spread'])
  if (!info.sections.includes(s)) fail(`no section ${s} (sections: ${info.sections.join(' ')})`)
const top = info.tables['Top functions (self, and total with callees)']
if (!top) fail('no Top functions table')
else {
  if (JSON.stringify(top[0]) !== JSON.stringify(csv[0]))
    fail(`Top functions header ${top[0]} against csv ${csv[0]}`)
  const n = Math.min(top.length, csv.length)
  for (let i = 1; i < n; i++)
    if (JSON.stringify(top[i]) !== JSON.stringify(csv[i]))
      fail(`Top functions row ${i}: ${top[i]} against csv ${csv[i]}`)
  if (top.length < Math.min(csv.length, 31)) fail(`Top functions: ${top.length - 1} rows, csv ${csv.length - 1}`)
}

// the flame graph: its own document in the iframe
const frame = page.frames().find(f => f !== page.mainFrame())
let frames = 0
if (!frame) fail('no flame graph frame')
else {
  frames = await frame.evaluate(() => document.querySelectorAll('g.f').length)
  if (!frames) fail('flame graph: no frames drawn')
  const el = await frame.$(`g.f[data-n="${csv[1] ? csv[1][0] : ''}"]`)
  if (!el) fail(`flame graph: no frame for ${csv[1] && csv[1][0]}`)
  else {
    await el.click()
    await page.waitForTimeout(200)
    const w = await frame.evaluate(n => {
      const g = document.querySelector(`g.f[data-n="${n}"] rect`)
      return [Number(g.getAttribute('width')), document.documentElement.getAttribute('width')]
    }, csv[1][0])
    if (!(w[0] > 0.9 * (Number(w[1]) - 40))) fail(`flame graph: click on ${csv[1][0]} did not zoom it (width ${w[0]} of ${w[1]})`)
  }
}
// the threads table in ms (csv's first_ns, last_ns), and sortable: a click on a heading
// sorts by that column, numbers largest first, a second click smallest first
const sorted = await page.evaluate(() => {
  const h = [...document.querySelectorAll('h3')].find(e => e.textContent === 'Samples per thread')
  const t = h && h.nextElementSibling
  if (!t || t.tagName !== 'TABLE') return null
  const heads = [...t.tHead.rows[0].cells].map(c => c.textContent.replace(/ .*/, ''))
  const col = (name) => [...t.tBodies[0].rows].map(r => r.cells[heads.indexOf(name)].textContent)
  const out = { heads, before: col('samples') }
  const th = t.tHead.rows[0].cells[heads.indexOf('samples')]
  th.click()
  out.down = col('samples')
  th.click()
  out.up = col('samples')
  const name = t.tHead.rows[0].cells[heads.indexOf('name')]
  name.click()
  out.names = col('name')
  return out
})
if (!sorted) fail('no threads table')
else {
  if (!sorted.heads.includes('first_ms') || !sorted.heads.includes('last_ms') ||
      sorted.heads.some(h => h.endsWith('_ns')))
    fail(`threads table headings: ${sorted.heads}`)
  const nums = (a) => a.map(Number)
  const desc = [...nums(sorted.before)].sort((a, b) => b - a), asc = [...desc].reverse()
  if (JSON.stringify(nums(sorted.down)) !== JSON.stringify(desc)) fail(`sort by samples: ${sorted.down}`)
  if (JSON.stringify(nums(sorted.up)) !== JSON.stringify(asc)) fail(`sort again: ${sorted.up}`)
  const az = [...sorted.names].sort((a, b) => a.localeCompare(b))
  if (JSON.stringify(sorted.names) !== JSON.stringify(az)) fail(`sort by name: ${sorted.names}`)
}
await page.screenshot({ path: shot, fullPage: true })
await browser.close()
if (failures.length) {
  for (const f of failures) console.log(`FAIL ${htmlFile}: ${f}`)
  process.exit(1)
}
console.log(`ok ${htmlFile}: sections ${info.sections.join(',')}; ${top.length - 1} function rows as the csv; ${frames} flame graph frames, click zooms; screenshot ${shot}`)
