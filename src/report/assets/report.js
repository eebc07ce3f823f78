(function () {
  'use strict';
  const KNOWN = ['kernel', 'variant', 'row', 'target', 'triton', 'triton_version', 'status', 'kind', 'stage',
    'pass', 'message', 'fingerprint', 'group', 'new', 'in_baseline', 'autotuner', 'autotuned', 'cached', 'why', 'link', 'compile_s', 'wall_s', 'stages',
    'metadata', 'sizes', 'resources', 'source', 'error_source', 'log'];
  const STAGE_ORDER = ['import', 'frontend', 'ttir', 'ttgir', 'llir', 'ptx', 'cubin', 'amdgcn', 'hsaco'];
  const STATUSES = ['ok', 'failed', 'xfail', 'xpass', 'skipped'];

  // Only createElement/textContent/setAttribute below: report text is never parsed as markup.
  function el(tag, cls, text) {
    const e = document.createElement(tag);
    if (cls) e.className = cls;
    if (text !== undefined && text !== null) e.textContent = String(text);
    return e;
  }
  function add(parent, child) { parent.appendChild(child); return child; }
  function isObj(v) { return v !== null && typeof v === 'object' && !Array.isArray(v); }
  function isEmpty(v) {
    return v === undefined || v === null || v === '' || (Array.isArray(v) && v.length === 0) ||
      (isObj(v) && Object.keys(v).length === 0);
  }
  function str(v) { return typeof v === 'string' ? v : (v === undefined || v === null ? '' : String(v)); }
  // `text` into `parent`: a link when it is an https address (opened apart from the report, with
  // no opener), else plain text; never markup.
  function linkOrText(parent, text) {
    if (!/^https:\/\//i.test(text)) return add(parent, document.createTextNode(text));
    const a = add(parent, el('a', null, text));
    a.href = text;
    a.rel = 'noopener noreferrer';
    a.target = '_blank';
    return a;
  }
  function seconds(s) {
    if (typeof s !== 'number') return str(s);
    return (s >= 10 ? s.toFixed(1) : s >= 1 ? s.toFixed(2) : s.toFixed(3)) + ' s';
  }
  function where(loc) { return isObj(loc) && loc.file ? str(loc.file) + ':' + str(loc.line) : ''; }

  function renderValue(v, depth) {
    if (v === undefined || v === null) return el('span', 'null', 'null');
    if (Array.isArray(v)) {
      if (v.every(x => x === null || typeof x !== 'object')) return el('span', 'mono', v.map(x => String(x)).join(', '));
      const ol = el('ol');
      for (const x of v) add(add(ol, el('li')), renderValue(x, depth + 1));
      return ol;
    }
    if (typeof v === 'object') {
      if (depth > 8) return el('span', 'mono', JSON.stringify(v));
      return kvTable(v, depth + 1);
    }
    if (typeof v === 'string' && v.indexOf('\n') >= 0) return el('pre', 'inline', v);
    return el('span', typeof v === 'string' ? null : 'mono', String(v));
  }
  function kvTable(obj, depth) {
    const table = el('table', 'kv');
    const body = add(table, el('tbody'));
    for (const key of Object.keys(obj)) {
      const tr = add(body, el('tr'));
      add(tr, el('th', null, key));
      add(add(tr, el('td')), renderValue(obj[key], depth || 0));
    }
    return table;
  }

  let data;
  try {
    data = JSON.parse(document.getElementById('data').textContent);
  } catch (e) {
    add(document.body, el('p', null, 'Cannot read the embedded report: ' + e)).id = 'error';
    return;
  }
  const report = data.report || {};
  const view = data.view || {};
  const cells = Array.isArray(report.cells) ? report.cells : [];
  const targets = Array.isArray(report.targets) ? report.targets.map(str) : [];
  const rows = Array.isArray(report.rows) ? report.rows.map(str) : [];
  const labels = Array.isArray(view.labels) ? view.labels : [];
  const repro = Array.isArray(view.repro) ? view.repro : [];
  const env = isObj(report.environment) ? report.environment : {};
  const missingShards = Array.isArray(report.missing_shards) ? report.missing_shards : [];
  const incomplete = report.interrupted === true || missingShards.length > 0;
  const byPosition = new Map();
  cells.forEach((c, i) => byPosition.set(str(c.row) + '\u0000' + str(c.target), i));

  // ---- header
  const header = document.getElementById('header');
  add(header, el('h1', null, 'triton-portcheck report'));
  const envLine = add(header, el('div', 'env'));
  function envItem(name, value, title) {
    if (isEmpty(value)) return;
    const span = add(envLine, el('span'));
    add(span, el('b', null, name + ' '));
    add(span, document.createTextNode(str(value)));
    if (title) span.title = str(title);
  }
  const tool = isObj(report.tool) ? report.tool : {};
  const triton = isObj(env.triton) ? env.triton : {};
  const python = isObj(env.python) ? env.python : {};
  const options = isObj(env.options) ? env.options : {};
  envItem('triton-portcheck', tool.version);
  envItem('triton', triton.version, triton.path);
  envItem('python', python.version, python.executable);
  envItem('host', env.host);
  envItem('started', env.started);
  envItem('manifest', options.manifest);
  envItem('isolation', options.isolation);
  envItem('cache', options.cache === null ? 'off (--no-cache)' : options.cache);
  add(header, el('p', 'summary', view.summary)).id = 'summary';
  const summary = isObj(report.summary) ? report.summary : {};
  const chips = add(header, el('div', 'chips'));
  for (const [key, name] of [['ok', 'ok'], ['failed', 'failed'], ['xfail', 'expected to fail'],
    ['xpass', 'expected to fail but passed'], ['new', 'new'], ['from_cache', 'from cache']]) {
    const n = summary[key];
    if (typeof n !== 'number' || (n === 0 && key !== 'ok' && key !== 'failed')) continue;
    const chip = add(chips, el('span', 'chip', n + ' ' + name));
    if (STATUSES.indexOf(key) >= 0) chip.classList.add('badge', 's-' + key);
  }
  if (report.interrupted) add(header, el('p', 'banner', 'Interrupted: unfinished cells are shown as ?'));
  if (missingShards.length)
    add(header, el('p', 'banner', 'Incomplete: shard ' + missingShards.map(str).join(', ') +
                   ' missing, the cells no report holds are shown as ?'));
  if (isObj(report.shard)) {
    add(header, el('p', 'banner', 'Shard ' + str(report.shard.index) + '/' + str(report.shard.count) +
      ': the other cells are shown as -'));
  }
  if (Array.isArray(report.merged_from) && report.merged_from.length) {
    const p = add(header, el('div', 'env', 'merged from: '));
    p.id = 'merged-from';
    add(p, el('span', 'mono', report.merged_from.map(str).join(', ')));
  }
  if (isObj(report.baseline)) {
    const known = cells.filter(c => c.in_baseline).length;
    const fixed = Array.isArray(report.baseline.fixed) ? report.baseline.fixed : [];
    const box = add(header, el('div', 'baseline'));
    box.id = 'baseline';
    add(box, el('div', null, 'baseline ' + str(report.baseline.origin) + ': ' + known +
      ' failures already known, ' + (fixed.length ? fixed.length + ' fixed since:' : 'none fixed')));
    const ul = add(box, el('ul'));
    for (const f of fixed) {
      add(ul, el('li', null, 'fixed: ' + str(f.row) + ' on ' + str(f.target) + ' (was ' + str(f.kind) + ': ' +
        str(f.message) + ')'));
    }
  }
  add(header, el('p', 'note', str(report.disclaimer)));
  document.title = 'triton-portcheck: ' + str(view.summary).split(' \u00b7 ')[0];

  // ---- filters
  const filters = document.getElementById('filters');
  const kernelBox = (() => {
    const fs = add(filters, el('fieldset'));
    add(fs, el('legend', null, 'Kernel'));
    const input = add(fs, el('input'));
    input.type = 'search';
    input.id = 'f-kernel';
    input.placeholder = 'substring of the row name';
    input.setAttribute('list', 'f-kernel-list');
    input.setAttribute('aria-label', 'filter kernels');
    const list = add(fs, el('datalist'));
    list.id = 'f-kernel-list';
    for (const r of rows) add(list, el('option')).value = r;
    return input;
  })();
  function checkboxGroup(legend, id, values, text) {
    const fs = add(filters, el('fieldset'));
    fs.id = id;
    add(fs, el('legend', null, legend));
    const boxes = {};
    for (const v of values) {
      const label = add(fs, el('label'));
      const box = add(label, el('input'));
      box.type = 'checkbox';
      box.checked = true;
      box.value = v;
      add(label, document.createTextNode(' ' + text(v)));
      boxes[v] = box;
    }
    for (const [name, state] of [['all', true], ['none', false]]) {
      const b = add(fs, el('button', null, name));
      b.type = 'button';
      b.addEventListener('click', () => { for (const v of values) boxes[v].checked = state; applyFilters(); });
    }
    return boxes;
  }
  const targetBoxes = checkboxGroup('Target', 'f-targets', targets, t => t);
  const statusCount = {};
  for (const c of cells) statusCount[c.status] = (statusCount[c.status] || 0) + 1;
  const statusBoxes = checkboxGroup('Status', 'f-status', STATUSES, s => s + ' (' + (statusCount[s] || 0) + ')');
  // A failure group (the footnotes' letters): only its cells, and the rows that have one.
  const groupList = Array.isArray(view.groups) ? view.groups : [];
  const groupOf = new Map();  // cell index -> letter
  for (const g of groupList) for (const i of (Array.isArray(g.cells) ? g.cells : [])) groupOf.set(i, str(g.letter));
  const groupSelect = (() => {
    const fs = add(filters, el('fieldset'));
    add(fs, el('legend', null, 'Failure group'));
    const select = add(fs, el('select'));
    select.id = 'f-group';
    select.setAttribute('aria-label', 'filter by failure group');
    add(select, el('option', null, 'any')).value = '';
    for (const g of groupList) {
      const first = cells[(Array.isArray(g.cells) ? g.cells : [])[0]];
      const text = first ? str(first.kind) + ': ' + str(first.message).slice(0, 80) : '';
      add(select, el('option', null, '[' + str(g.letter) + '] ' + text)).value = str(g.letter);
    }
    return select;
  })();
  const shown = add(filters, el('span', 'muted'));
  shown.id = 'f-shown';

  // ---- matrix
  const matrix = document.getElementById('matrix');
  const headRow = add(add(matrix, el('thead')), el('tr'));
  add(headRow, el('th', null, 'kernel'));
  const columnHeads = targets.map(t => {
    const th = add(headRow, el('th', null, t));
    th.setAttribute('data-target', t);
    return th;
  });
  const body = add(matrix, el('tbody'));
  const rowEls = [];
  const cellEls = [];      // [row][column] -> td
  const tdByIndex = [];    // cell index -> td
  const fragment = document.createDocumentFragment();
  rows.forEach(name => {
    const tr = add(fragment, el('tr'));
    tr.setAttribute('data-row', name);
    const th = add(tr, el('th', null, name));
    th.title = name;
    const tds = [];
    targets.forEach(target => {
      const index = byPosition.get(name + '\u0000' + target);
      let td;
      if (index === undefined) {
        td = add(tr, el('td', 'cell s-missing', incomplete ? '?' : '-'));
        td.setAttribute('data-status', 'missing');
        td.title = name + ' on ' + target + ': not checked';
      } else {
        const c = cells[index];
        const status = STATUSES.indexOf(c.status) >= 0 ? c.status : 'failed';
        td = add(tr, el('td', 'cell s-' + status, labels[index] !== undefined ? labels[index] : c.status));
        td.setAttribute('data-status', status);
        td.setAttribute('data-idx', String(index));
        td.tabIndex = 0;
        if (c.cached) td.classList.add('cached');
        td.title = name + ' on ' + target + ': ' + str(c.status) + (c.kind ? ' (' + str(c.kind) + ')' : '') +
          (c.cached ? ', from cache' : '') + (c.message ? '\n' + str(c.message) : '');
        tdByIndex[index] = td;
      }
      td.setAttribute('data-target', target);
      tds.push(td);
    });
    rowEls.push(tr);
    cellEls.push(tds);
  });
  body.appendChild(fragment);

  function applyFilters() {
    const query = kernelBox.value.trim().toLowerCase();
    const columnOn = targets.map(t => targetBoxes[t].checked);
    const statusOn = {};
    let allStatuses = true;
    for (const s of STATUSES) { statusOn[s] = statusBoxes[s].checked; allStatuses = allStatuses && statusOn[s]; }
    const group = groupSelect.value;
    columnHeads.forEach((th, t) => th.classList.toggle('col-off', !columnOn[t]));
    let visibleRows = 0;
    rows.forEach((name, r) => {
      let any = false;
      cellEls[r].forEach((td, t) => {
        td.classList.toggle('col-off', !columnOn[t]);
        const status = td.getAttribute('data-status');
        let on = status === 'missing' ? allStatuses : statusOn[status];
        if (group && groupOf.get(Number(td.getAttribute('data-idx'))) !== group) on = false;
        td.classList.toggle('off', !on);
        if (on && columnOn[t]) any = true;
      });
      const everything = allStatuses && !group && columnOn.some(x => x);
      const visible = (query === '' || name.toLowerCase().indexOf(query) >= 0) && (any || everything);
      rowEls[r].classList.toggle('row-off', !visible);
      if (visible) ++visibleRows;
    });
    shown.textContent = 'showing ' + visibleRows + ' of ' + rows.length + ' rows, ' +
      columnOn.filter(x => x).length + ' of ' + targets.length + ' targets';
  }
  kernelBox.addEventListener('input', applyFilters);
  filters.addEventListener('change', applyFilters);

  // ---- detail panel
  const detail = document.getElementById('detail');
  let selected = null;
  function field(table, name, value, render) {
    if (isEmpty(value) && value !== 0 && value !== false) return;
    const tr = add(table, el('tr'));
    tr.setAttribute('data-field', name);
    add(tr, el('th', null, name));
    const td = add(tr, el('td'));
    if (render) render(td, value); else td.textContent = str(value);
  }
  function stagesTable(c) {
    const stages = isObj(c.stages) ? c.stages : {};
    const names = Object.keys(stages).sort((a, b) => {
      const ia = STAGE_ORDER.indexOf(a), ib = STAGE_ORDER.indexOf(b);
      return (ia < 0 ? 99 : ia) - (ib < 0 ? 99 : ib) || (a < b ? -1 : a > b ? 1 : 0);
    });
    const max = Math.max(1e-9, ...names.map(n => typeof stages[n] === 'number' ? stages[n] : 0));
    const table = el('table', 'stages');
    const tb = add(table, el('tbody'));
    for (const n of names) {
      const tr = add(tb, el('tr'));
      if (c.stage === n && c.status !== 'ok' && c.status !== 'xpass') tr.className = 'failed-stage';
      add(tr, el('td', null, n));
      const bar = add(add(tr, el('td', 'bar')), el('div', 'bar'));
      const fill = add(bar, el('div'));
      const v = typeof stages[n] === 'number' ? stages[n] : 0;
      fill.style.width = Math.max(0, Math.min(100, 100 * v / max)).toFixed(1) + '%';
      add(tr, el('td', 'mono', seconds(stages[n])));
    }
    return table;
  }
  function section(title, id, content) {
    add(detail, el('h3', null, title));
    content.id = id;
    add(detail, content);
  }
  function showCell(index) {
    const c = cells[index];
    if (!c) return;
    if (selected) selected.classList.remove('selected');
    selected = tdByIndex[index] || null;
    if (selected) selected.classList.add('selected');
    detail.replaceChildren();
    detail.setAttribute('data-idx', String(index));
    const h = add(detail, el('h2'));
    h.id = 'd-title';
    h.textContent = str(c.row) + ' on ' + str(c.target);
    const status = STATUSES.indexOf(c.status) >= 0 ? c.status : 'failed';
    const badge = add(detail, el('span', 'badge s-' + status, c.status + (labels[index] && labels[index] !== c.status ? ' \u00b7 ' + labels[index] : '')));
    badge.id = 'd-status';
    const table = el('table', 'kv');
    const tb = add(table, el('tbody'));
    field(tb, 'status', str(c.status) + (c.new ? ' (new failure)' : '') +
      (c.in_baseline ? ' (known: the baseline has this failure)' : '') +
      (c.status === 'launch' && Array.isArray(c.host_choices_of) && c.host_choices_of.length
        ? ' (not new: these options are what ' + c.host_choices_of.map(str).join(', ') +
          '\u2019s host code chose; capture --as ' + str(c.target) + ' records what ' + str(c.target) + ' is launched with)'
        : ''));
    field(tb, 'kind', c.kind);
    // A config of an autotuned launch: how the target's autotuner runs the launch.
    const tuned = c.autotuned && typeof c.autotuned === 'object' ? c.autotuned : null;
    field(tb, 'autotuned launch', tuned ? str(tuned.launch) + ': ' + str(tuned.remaining) + ' of ' +
      str(tuned.configs) + ' configs remain on ' + str(c.target) + (tuned.note ? ' \u2014 ' + str(tuned.note) : '') : null,
    (td, v) => { td.id = 'd-autotuned'; td.textContent = v; });
    field(tb, 'stage', c.stage);
    field(tb, 'MLIR pass', c.pass);
    field(tb, 'message', c.message, (td, v) => { td.className = 'msg'; td.id = 'd-message'; td.textContent = str(v); });
    field(tb, 'fingerprint', c.fingerprint, (td, v) => {
      add(td, el('span', 'mono', v));
      if (c.group) add(td, document.createTextNode(' (group [' + str(c.group) + '])'));
    });
    field(tb, 'why', c.why, (td, v) => { td.id = 'd-why'; td.textContent = str(v); });
    field(tb, 'link', c.link, (td, v) => {
      linkOrText(td, str(v));
      td.id = 'd-link';
    });
    field(tb, 'reproduce', repro[index], (td, v) => { td.className = 'mono'; td.id = 'd-repro'; td.textContent = str(v); });
    field(tb, 'kernel source', where(c.source), (td, v) => { td.className = 'mono'; td.textContent = v; });
    field(tb, 'error source', where(c.error_source), (td, v) => { td.className = 'mono'; td.textContent = v; });
    field(tb, 'kernel', c.kernel);
    field(tb, 'variant', c.variant);
    field(tb, 'triton', str(c.triton) + (c.triton_version ? ' (' + str(c.triton_version) + ')' : ''));
    field(tb, 'compile time', seconds(c.compile_s));
    field(tb, 'wall time', seconds(c.wall_s));
    field(tb, 'cache', c.cached ? 'served from the result cache' : 'compiled in this run',
      (td, v) => { td.id = 'd-cache'; td.textContent = v; });
    add(detail, table).id = 'd-fields';
    if (!isEmpty(c.stages)) section('Stages', 'd-stages', stagesTable(c));
    for (const [key, title] of [['metadata', 'Metadata'], ['sizes', 'Sizes (bytes)'], ['resources', 'Resources']])
      if (!isEmpty(c[key])) section(title, 'd-' + key, isObj(c[key]) ? kvTable(c[key], 0) : renderValue(c[key], 0));
    if (!isEmpty(c.log)) section('Log', 'd-log', el('pre', 'log', c.log));
    const extra = Object.keys(c).filter(k => KNOWN.indexOf(k) < 0);
    if (extra.length) {
      const box = el('div');
      for (const key of extra) {
        const h4 = add(box, el('h3', null, key));
        h4.setAttribute('data-extra', key);
        add(box, isObj(c[key]) ? kvTable(c[key], 0) : renderValue(c[key], 0));
      }
      section('Other fields', 'd-extra', box);
    }
    if (history.replaceState) history.replaceState(null, '', '#cell-' + index);
  }
  function cellFromEvent(event) {
    const td = event.target.closest ? event.target.closest('td[data-idx]') : null;
    return td ? Number(td.getAttribute('data-idx')) : -1;
  }
  body.addEventListener('click', event => { const i = cellFromEvent(event); if (i >= 0) showCell(i); });
  body.addEventListener('keydown', event => {
    if (event.key !== 'Enter' && event.key !== ' ') return;
    const i = cellFromEvent(event);
    if (i >= 0) { event.preventDefault(); showCell(i); }
  });

  // ---- failure groups, the terminal's footnotes
  const groupsBox = document.getElementById('groups');
  const groups = Array.isArray(view.groups) ? view.groups : [];
  if (groups.length) {
    add(groupsBox, el('h2', null, 'Failure groups'));
    const ol = add(groupsBox, el('ol'));
    for (const g of groups) {
      const members = (Array.isArray(g.cells) ? g.cells : []).filter(i => cells[i]);
      if (!members.length) continue;
      const first = cells[members[0]];
      const li = add(ol, el('li', 'group'));
      li.id = 'group-' + str(g.letter);
      li.setAttribute('data-group', str(g.letter));
      if (members.every(i => cells[i].status === 'xfail')) li.classList.add('g-xfail');
      const head = add(li, el('div'));
      const letter = add(head, el('span', 'letter', '[' + str(g.letter) + ']'));
      letter.title = 'highlight these cells';
      letter.addEventListener('click', () => {
        const on = !letter.classList.contains('active');
        for (const td of tdByIndex) if (td) td.classList.remove('hl');
        document.querySelectorAll('#groups .letter.active').forEach(x => x.classList.remove('active'));
        if (on) { letter.classList.add('active'); for (const i of members) if (tdByIndex[i]) tdByIndex[i].classList.add('hl'); }
      });
      const place = first.pass ? 'in pass ' + str(first.pass) + ' (stage ' + str(first.stage) + ')' : 'in stage ' + str(first.stage);
      add(head, document.createTextNode(' ' + str(first.kind) + ' ' + place + ': '));
      add(head, el('span', 'gmsg', first.message));
      const affected = add(li, el('div', 'affected'));
      const byRow = new Map();
      for (const i of members) {
        const row = str(cells[i].row);
        if (!byRow.has(row)) byRow.set(row, []);
        byRow.get(row).push(i);
      }
      for (const [row, list] of byRow) {
        const line = add(affected, el('div'));
        add(line, document.createTextNode(row + ' on '));
        list.forEach((i, k) => {
          if (k) add(line, document.createTextNode(', '));
          const b = add(line, el('button', 'linkish', cells[i].target));
          b.type = 'button';
          b.addEventListener('click', () => { showCell(i); if (tdByIndex[i]) tdByIndex[i].focus(); });
        });
      }
      const at = where(first.error_source);
      if (at) add(li, el('div', 'mono muted', 'at ' + at));
      if (first.why) add(li, el('div', 'why', 'why: ' + str(first.why)));
      if (first.link) {
        linkOrText(add(li, el('div', null, 'see: ')), str(first.link));
      }
    }
  }

  applyFilters();
  const m = /^#cell-(\d+)$/.exec(location.hash);
  if (m && Number(m[1]) < cells.length) showCell(Number(m[1]));
  document.body.setAttribute('data-ready', String(cells.length));
})();
