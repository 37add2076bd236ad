// speedscope_check.mjs: opens a file in the real speedscope app (npm package
// "speedscope", dist/release/index.html) in headless Debian chromium driven by
// playwright-core, the way `speedscope FILE` opens it: index.html#localProfilePath=
// a .js file that calls speedscope.loadFileFromBase64(name, base64).
//
// usage: node speedscope_check.mjs NPM_DIR SHOT_DIR FILE [--sandwich N]
//   NPM_DIR: the directory tests/consumers/npm.sh printed (node_modules there)
// Prints "importer: <speedscope's 'Importing as ...' line>", then with --sandwich the
// first N rows of the Sandwich view's table of the first profile, one a line:
// "sandwich: SELF<TAB>TOTAL<TAB>NAME" (as speedscope shows them). Saves
// SHOT_DIR/<file>.png (and <file>.sandwich.png). Exits 1, saying why, on a console
// error, an uncaught exception, an alert, "Something went wrong", "Unrecognized
// format", or when nothing renders within 20 s; 0 otherwise.
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { createRequire } from 'node:module'

const [npmDir, shotDir, file, flag, nArg] = process.argv.slice(2)
if (!npmDir || !shotDir || !file) {
  console.error('usage: node speedscope_check.mjs NPM_DIR SHOT_DIR FILE [--sandwich N]')
  process.exit(2)
}
const require = createRequire(path.resolve(npmDir) + '/')
const { chromium } = require('playwright-core')
const app = path.join(path.dirname(require.resolve('speedscope/package.json')), 'dist/release/index.html')
fs.mkdirSync(shotDir, { recursive: true })
const shot = path.join(shotDir, path.basename(file).replace(/[^A-Za-z0-9._-]/g, '_'))

const problems = []
const logs = []
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox', '--allow-file-access-from-files'],
})
const loader = path.join(os.tmpdir(), `sonde-speedscope-${process.pid}.js`)
try {
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } })
  page.on('console', m => {
    logs.push(m.text())
    if (m.type() === 'error') problems.push('console error: ' + m.text())
  })
  page.on('pageerror', e => problems.push('uncaught: ' + String(e)))
  page.on('dialog', async d => { problems.push('alert: ' + d.message()); await d.dismiss() })
  const b64 = fs.readFileSync(file).toString('base64')
  fs.writeFileSync(loader, `speedscope.loadFileFromBase64(${JSON.stringify(path.basename(file))}, ${JSON.stringify(b64)})`)
  await page.goto('file://' + app + '#localProfilePath=' + loader)
  const bad = /Something went wrong|Unrecognized format/
  try {
    // loaded: the landing page ("Drag and drop") gives way to the flame chart's canvases
    await page.waitForFunction(re => new RegExp(re).test(document.body.innerText) ||
      (document.querySelectorAll('canvas').length > 0 && !document.body.innerText.includes('Drag and drop')),
    bad.source, { timeout: 20000 })
    await page.waitForTimeout(500)
    const text = await page.evaluate(() => document.body.innerText)
    if (bad.test(text)) problems.push('page says: ' + text.trim().split('\n').find(l => bad.test(l)))
  } catch (e) {
    problems.push('nothing rendered within 20 s')
  }
  await page.screenshot({ path: shot + '.png' })
  const importer = logs.find(l => l.startsWith('Importing as')) || '(no "Importing as" line)'
  console.log('importer: ' + importer)
  if (flag === '--sandwich' && problems.length === 0) {
    await page.keyboard.press('3') // speedscope's key for the Sandwich view
    await page.waitForTimeout(800)
    // the rows are the table after the one whose header says "Symbol Name" (the
    // profile selector is a table too)
    const rows = await page.evaluate(() => {
      const ts = [...document.querySelectorAll('table')]
      const h = ts.findIndex(t => /Symbol Name/.test(t.innerText))
      const t = h >= 0 ? ts[h + 1] : null
      return t ? [...t.querySelectorAll('tr')].map(tr =>
        [...tr.querySelectorAll('td')].map(td => td.innerText.trim())).filter(r => r.length >= 3) : []
    })
    if (!rows.length)
      problems.push('the Sandwich view shows no table rows')
    for (const r of rows.slice(0, Number(nArg) || 10)) // speedscope: Total, Self, Symbol Name
      console.log(`sandwich: ${r[1]}\t${r[0]}\t${r[2]}`)
    await page.screenshot({ path: shot + '.sandwich.png' })
  }
} finally {
  await browser.close()
  fs.rmSync(loader, { force: true })
}
for (const p of problems)
  console.log('problem: ' + p.slice(0, 400))
process.exit(problems.length ? 1 : 0)
