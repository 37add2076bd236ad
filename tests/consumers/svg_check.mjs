// svg_check.mjs: checks a flame graph of `sonde report --format svg` (or `sonde diff
// --format svg`) in headless Debian chromium through playwright-core, against the folded
// stacks of the same profile (`sonde report --format folded`, same options).
// usage: node svg_check.mjs NPMDIR FILE.svg FILE.folded SHOTDIR [--search TERM]
//             [--click NAME] [--before A.folded [--absolute]]
// NPMDIR: tests/consumers/npm.sh's directory (node_modules/playwright-core).
// It checks that the file renders without console errors; that the frames are exactly
// the merged prefixes of the folded lines of at least 0.1 % of the total, each with the
// sum of the counts of the lines through it, its x the values of its name-sorted elder
// siblings, and its width and x those values to scale (within rounding); that labels
// fit their frames; that hovering shows the name and percent; that clicking a frame
// widens it to full width and hides its siblings, and "Reset Zoom" restores it; that a
// search paints exactly the frames whose names match and says the value of the lines
// through a match, each counted once; that "Icicle" flips the layout; with --before,
// that each frame is red where its self grew from A, blue where it shrank. Screenshots
// go to SHOTDIR (BASENAME-initial.png, -zoom, -search, -icicle). Prints one "ok" line,
// or "FAIL: ..." lines and exits 1.
import fs from 'node:fs'
import path from 'node:path'
import { createRequire } from 'node:module'

const [npmdir, svgFile, foldedFile, shotDir, ...rest] = process.argv.slice(2)
if (!shotDir) {
  console.error('usage: node svg_check.mjs NPMDIR FILE.svg FILE.folded SHOTDIR [options]')
  process.exit(2)
}
const opt = { search: null, click: null, before: null, absolute: false }
for (let i = 0; i < rest.length; i++) {
  if (rest[i] === '--absolute') opt.absolute = true
  else opt[rest[i].slice(2)] = rest[++i]
}
const require = createRequire(npmdir + '/')
const { chromium } = require('playwright-core')
const PAD = 10, MIN_SHARE = 0.001, HIGHLIGHT = 'rgb(230,0,230)'
const failures = []
const fail = (m) => failures.push(m)

// folded lines: path -> count; prefix -> sum of the lines through it
function readFolded (file) {
  const lines = new Map(), prefix = new Map()
  let total = 0
  for (const l of fs.readFileSync(file, 'utf8').split('\n')) {
    const m = /^(.*) (\d+)$/.exec(l)
    if (!m) continue
    const n = Number(m[2]), names = m[1].split(';')
    lines.set(m[1], (lines.get(m[1]) || 0) + n)
    total += n
    for (let k = 1; k <= names.length; k++) {
      const p = names.slice(0, k).join(';')
      prefix.set(p, (prefix.get(p) || 0) + n)
    }
  }
  return { lines, prefix, total }
}
const after = readFolded(foldedFile)
const before = opt.before ? readFolded(opt.before) : null

// the expected x of each prefix: its parent's, plus its name-sorted elder siblings' values
function expectedX (prefix) {
  const kids = new Map()
  for (const p of prefix.keys()) {
    const cut = p.lastIndexOf(';'), parent = cut < 0 ? '' : p.slice(0, cut)
    if (!kids.has(parent)) kids.set(parent, [])
    kids.get(parent).push(p)
  }
  const x = new Map([['', 0]])
  const walk = (parent) => {
    let at = x.get(parent)
    const names = (kids.get(parent) || []).sort((a, b) => {
      const na = a.slice(a.lastIndexOf(';') + 1), nb = b.slice(b.lastIndexOf(';') + 1)
      return na < nb ? -1 : na > nb ? 1 : 0
    })
    for (const p of names) {
      x.set(p, at)
      at += prefix.get(p)
      walk(p)
    }
  }
  walk('')
  return x
}

const close = (a, b, eps = 0.011) => Math.abs(a - b) <= eps
const browser = await chromium.launch({ executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  args: ['--no-sandbox'] })
const errors = []
try {
  const page = await browser.newPage()
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()) })
  page.on('pageerror', (e) => errors.push(String(e)))
  await page.goto('file://' + path.resolve(svgFile))
  const dims = await page.evaluate(() => {
    const s = document.documentElement, a = (k) => +s.getAttribute(k)
    return { w: a('width'), h: a('height'), top: a('data-top'), bottom: a('data-bottom'),
      div: a('data-div'), unit: s.getAttribute('data-unit') }
  })
  // opened in a window (1280x720) lower than the graph: the deepest level that holds
  // half the weight is in view
  const opened = await page.evaluate(() => {
    const s = document.documentElement, H = +s.getAttribute('height')
    const BOT = +s.getAttribute('data-bottom'), ROW = 16
    const fs = [...document.querySelectorAll('g.f')].map((g) => [+g.getAttribute('data-d'), +g.getAttribute('data-v')])
    const rootV = Math.max(...fs.map((f) => f[1]))
    const d = Math.max(...fs.filter((f) => 2 * f[1] >= rootV).map((f) => f[0]))
    const y = H - BOT - (d + 1) * ROW
    return { y, top: window.scrollY, h: window.innerHeight, H, d }
  })
  if (!(opened.y >= opened.top && opened.y + 16 <= opened.top + opened.h))
    fail(`opened at ${opened.top}..${opened.top + opened.h} of ${opened.H}px: level ${opened.d}, where half the weight is, at ${opened.y}px`)
  await page.setViewportSize({ width: dims.w, height: Math.max(dims.h, 100) })
  const readFrames = () => page.evaluate(() => [...document.querySelectorAll('g.f')].map((g) => {
    const r = g.querySelector('rect'), t = g.querySelector('text'), a = (k) => g.getAttribute(k)
    return { i: +a('data-i'), u: g.hasAttribute('data-u') ? +a('data-u') : -1, d: +a('data-d'),
      x: +a('data-x'), v: +a('data-v'), n: a('data-n'), c: a('data-c'),
      rx: +r.getAttribute('x'), ry: +r.getAttribute('y'), rw: +r.getAttribute('width'),
      fill: r.getAttribute('fill'), label: t.textContent,
      labelPx: t.textContent ? t.getComputedTextLength() : 0,
      hidden: getComputedStyle(g).display === 'none', title: g.querySelector('title').textContent }
  }))
  const frames = await readFrames()
  const byId = new Map(frames.map((f) => [f.i, f]))
  const pathOf = (f) => {
    const names = []
    for (let c = f; c && c.i !== 0; c = byId.get(c.u)) names.unshift(c.n)
    return names.join(';')
  }
  const root = byId.get(0)
  const scale = (dims.w - 2 * PAD) / after.total
  const fmt = (v) => (dims.div > 1 ? (v / dims.div).toFixed(3) : String(v)) + ' ' + dims.unit
  const pct = (v) => (100 * v / after.total).toFixed(2) + '%'

  // frames against the folded counts
  if (!root || root.v !== after.total) fail(`root value ${root && root.v}, folded total ${after.total}`)
  const ex = expectedX(after.prefix)
  const drawn = new Set()
  for (const f of frames) {
    if (f.i === 0) continue
    const p = pathOf(f)
    drawn.add(p)
    if (after.prefix.get(p) !== f.v) fail(`frame ${p}: value ${f.v}, folded ${after.prefix.get(p)}`)
    if (ex.get(p) !== f.x) fail(`frame ${p}: x ${f.x}, expected ${ex.get(p)} (siblings by name)`)
    if (!close(f.rw, f.v * scale)) fail(`frame ${p}: width ${f.rw}px for ${f.v} (${f.v * scale}px)`)
    if (!close(f.rx, PAD + f.x * scale)) fail(`frame ${p}: x ${f.rx}px, expected ${PAD + f.x * scale}`)
    if (f.label && f.labelPx > f.rw) fail(`frame ${p}: label ${f.labelPx}px wider than ${f.rw}px`)
    if (f.label && !f.n.startsWith(f.label.replace(/\.\.$/, ''))) fail(`frame ${p}: label '${f.label}'`)
  }
  for (const [p, v] of after.prefix) {
    if (v >= MIN_SHARE * after.total && !drawn.has(p)) fail(`folded prefix ${p} (${v}) has no frame`)
    if (v < MIN_SHARE * after.total && drawn.has(p)) fail(`frame ${p} (${v}) under 0.1 % drawn`)
  }
  await page.screenshot({ path: path.join(shotDir, path.basename(svgFile, '.svg') + '-initial.png') })

  // the frame to hover and click: --click NAME, else the widest frame at depth 2
  const deep = frames.filter((f) => f.d >= 2)
  const target = opt.click ? frames.find((f) => f.n === opt.click && f.d >= 1)
    : deep.sort((a, b) => b.v - a.v || a.i - b.i)[0]
  if (!target) fail(`no frame to click (${opt.click || 'depth 2'})`)
  if (target) {
    const center = { x: target.rx + target.rw / 2, y: target.ry + 7 }
    await page.mouse.move(center.x, center.y)
    const details = await page.textContent('#details')
    if (!details.startsWith(target.n + ' | ') || !details.includes(pct(target.v)) ||
        !details.includes(fmt(target.v))) {
      fail(`hover ${target.n}: details '${details}', expected its name, ${fmt(target.v)} and ${pct(target.v)}`)
    }
    await page.mouse.click(center.x, center.y)
    const z = await readFrames()
    const zt = z.find((f) => f.i === target.i)
    if (!close(zt.rw, dims.w - 2 * PAD)) fail(`zoom ${target.n}: width ${zt.rw}, expected ${dims.w - 2 * PAD}`)
    const sibs = z.filter((f) => f.u === target.u && f.i !== target.i)
    if (sibs.some((f) => !f.hidden)) fail(`zoom ${target.n}: siblings still shown`)
    for (const f of z.filter((f) => f.u === target.i)) {
      if (!close(f.rw, f.v * (dims.w - 2 * PAD) / target.v)) fail(`zoom: child ${f.n} width ${f.rw}`)
    }
    for (let a = byId.get(target.u); a; a = byId.get(a.u)) {
      const za = z.find((f) => f.i === a.i)
      if (za.hidden || !close(za.rw, dims.w - 2 * PAD)) fail(`zoom: ancestor ${a.n} not full width`)
    }
    await page.screenshot({ path: path.join(shotDir, path.basename(svgFile, '.svg') + '-zoom.png') })
    await page.click('#unzoom')
    const u = (await readFrames()).find((f) => f.i === target.i)
    if (!close(u.rw, target.v * scale) || (await readFrames()).some((f) => f.hidden)) {
      fail(`reset zoom: ${target.n} width ${u.rw}, or frames still hidden`)
    }
  }

  // search through the prompt
  if (opt.search) {
    let re = null
    try { re = new RegExp(opt.search) } catch (e) { re = null }
    const matches = (n) => re ? re.test(n) : n.includes(opt.search)
    page.once('dialog', (d) => d.accept(opt.search))
    await page.click('#search')
    const s = await readFrames()
    const lit = s.filter((f) => f.fill === HIGHLIGHT).map((f) => f.i).sort((a, b) => a - b)
    const want = s.filter((f) => f.i !== 0 && matches(f.n)).map((f) => f.i).sort((a, b) => a - b)
    if (!want.length) fail(`search ${opt.search}: no frame matches (a useless check)`)
    if (lit.join() !== want.join()) fail(`search ${opt.search}: painted ${lit}, matching ${want}`)
    let sum = 0 // the lines through a drawn matching frame, each once
    for (const [p, n] of after.lines) {
      const names = p.split(';')
      if (names.some((_, k) => drawn.has(names.slice(0, k + 1).join(';')) && matches(names[k]))) sum += n
    }
    const text = await page.textContent('#matched')
    const expect = `matched: ${fmt(sum)} (${pct(sum)})`
    if (text !== expect) fail(`search ${opt.search}: '${text}', expected '${expect}'`)
    await page.screenshot({ path: path.join(shotDir, path.basename(svgFile, '.svg') + '-search.png') })
    await page.click('#search') // Clear
    const c = await readFrames()
    if (c.some((f) => f.fill === HIGHLIGHT) || (await page.textContent('#search')) !== 'Search') {
      fail('search: Clear left frames painted')
    }
  }

  // icicle: the root on top, each level one row lower
  const kid = frames.find((f) => f.u === 0)
  if (kid && !(root.ry > kid.ry)) fail(`flame layout: root at y ${root.ry}, its child at ${kid.ry}`)
  await page.click('#flip')
  const ic = await readFrames()
  const ir = ic.find((f) => f.i === 0), ik = kid && ic.find((f) => f.i === kid.i)
  if (!ir || ir.ry !== dims.top || (ik && ik.ry !== dims.top + 16) ||
      (await page.textContent('#flip')) !== 'Flame') {
    fail(`icicle: root at y ${ir && ir.ry}, child at ${ik && ik.ry}, expected ${dims.top} and ${dims.top + 16}`)
  }
  await page.screenshot({ path: path.join(shotDir, path.basename(svgFile, '.svg') + '-icicle.png') })

  // diff: red where self grew, blue where it shrank
  if (before) {
    let maxd = 0
    const deltas = frames.filter((f) => f.i !== 0).map((f) => {
      const p = pathOf(f), a = before.lines.get(p) || 0, b = after.lines.get(p) || 0
      const d = opt.absolute ? b - a : 100 * b / after.total - 100 * a / before.total
      maxd = Math.max(maxd, Math.abs(d))
      return { f, p, d }
    })
    for (const { f, p, d } of deltas) {
      const m = /^rgb\((\d+),(\d+),(\d+)\)$/.exec(f.fill)
      const [r, g, b] = m ? m.slice(1).map(Number) : [-1, -1, -1]
      const sat = maxd > 0 ? Math.round(240 - 190 * (Math.abs(d) / maxd)) : 240
      const ok = d > 1e-9 ? r === 255 && g === sat && b === sat
        : d < -1e-9 ? b === 255 && r === sat && g === sat : r === 240 && g === 240 && b === 240
      if (!ok) fail(`diff: frame ${p} (self delta ${d.toFixed(2)}) has fill ${f.fill}`)
      if (!/\nafter: .*\nbefore: .*\nself delta: /.test(f.title)) fail(`diff: frame ${p} title '${f.title}'`)
    }
  }
} finally {
  await browser.close()
}
for (const e of errors) fail(`console: ${e}`)
if (failures.length) {
  for (const m of failures) console.log(`FAIL ${svgFile}: ${m}`)
  process.exit(1)
}
console.log(`ok ${svgFile}: frames match ${foldedFile}; zoom, search, icicle${before ? ', diff colours' : ''}`)
