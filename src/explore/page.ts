// The explorer's one page: plain HTML, CSS and a script that asks the server's /api for what it shows.
// Document text is untrusted: it is only ever put in the page as text nodes, never as HTML.
export const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>near-dup explore</title>
<style>
  body { font: 14px/1.4 system-ui, "DejaVu Sans", sans-serif; margin: 0; display: grid; grid-template-columns: 340px 1fr; height: 100vh; }
  aside { border-right: 1px solid #ddd; overflow: auto; padding: 8px; }
  main { overflow: auto; padding: 8px 16px; }
  h1 { font-size: 16px; margin: 4px 0 8px; } h2 { font-size: 15px; margin: 16px 0 6px; }
  input[type=search] { width: 100%; box-sizing: border-box; padding: 4px; }
  ul { list-style: none; padding: 0; margin: 0; }
  li.cluster { padding: 6px; border-bottom: 1px solid #eee; cursor: pointer; }
  li.cluster:hover, li.cluster.open { background: #eef4ff; }
  .size { font-weight: bold; } .muted { color: #666; font-size: 12px; }
  table { border-collapse: collapse; width: 100%; } td, th { border-bottom: 1px solid #eee; padding: 4px; text-align: left; vertical-align: top; }
  .pair { display: grid; grid-template-columns: 1fr 1fr; gap: 12px; }
  .side { white-space: pre-wrap; border: 1px solid #ddd; padding: 8px; max-height: 70vh; overflow: auto; font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12px; }
  mark.shared { background: #fff3a8; } del { background: #ffd7d5; text-decoration: none; } ins { background: #d2f4d3; text-decoration: none; }
  img.plot { max-width: 48%; margin: 4px; border: 1px solid #eee; }
  button { margin: 6px 4px 6px 0; }
  .error { color: #b00020; }
  .next-step { background: #fff8e1; border: 1px solid #f0d58a; padding: 8px 12px; }
  .next-step code { display: block; margin: 6px 0; font-family: ui-monospace, "DejaVu Sans Mono", monospace; user-select: all; }
</style>
</head>
<body>
<aside>
  <h1>near-dup: <span id="index"></span></h1>
  <input id="search" type="search" placeholder="search clusters by id or text">
  <p class="muted" id="cluster-count"></p>
  <ul id="clusters"></ul>
  <button id="more-clusters" hidden>more clusters</button>
</aside>
<main>
  <p id="error" class="error" hidden></p>
  <div id="next-step" class="next-step" hidden><strong>Nothing to review yet.</strong> <span id="next-why"></span><code></code>Then reload this page.</div>
  <section id="cluster" hidden>
    <h2>Cluster <span id="cluster-id"></span> <span class="muted" id="member-count"></span></h2>
    <p class="muted">Tick two members and compare them, or open a member's similar documents.</p>
    <table><thead><tr><th></th><th>document</th><th>similarity to canonical</th><th>SimHash bits apart</th><th></th></tr></thead><tbody id="members"></tbody></table>
    <button id="more-members" hidden>more members</button>
    <button id="compare" disabled>compare the two ticked</button>
  </section>
  <section id="pair" hidden>
    <h2>Side by side: <span id="pair-title"></span></h2>
    <p class="views"><label><input type="radio" name="view" value="normalized" id="view-normalized" checked> as compared</label> <label><input type="radio" name="view" value="raw" id="view-raw"> as stored</label> <span class="muted" id="view-note"></span></p>
    <p class="muted"><mark class="shared">shared passage</mark> <del>only on the left</del> <ins>only on the right</ins> <span id="pair-note"></span></p>
    <div class="pair"><div class="side left"></div><div class="side right"></div></div>
  </section>
  <section id="similar" hidden>
    <h2>Similar to <span id="similar-id"></span></h2>
    <ul id="similar-hits"></ul>
    <h2>Partial copies</h2>
    <ul id="partial-hits"></ul>
  </section>
  <section id="report" hidden>
    <h2>Evaluation report</h2>
    <p class="muted" id="report-summary"></p>
    <div id="plots"></div>
  </section>
</main>
<script>
const $ = (id) => document.getElementById(id);
const el = (tag, text, cls) => { const e = document.createElement(tag); if (text !== undefined) e.textContent = text; if (cls) e.className = cls; return e; };
const PAGE = 25;
let clustersAfter = null, membersAfter = null, currentCluster = null, query = '', currentPair = null;
const picked = new Set();

async function api(path) {
  const res = await fetch(path);
  const body = await res.json();
  if (!res.ok) { $('error').textContent = body.error || res.statusText; $('error').hidden = false; throw new Error(body.error); }
  $('error').hidden = true;
  return body;
}

async function loadClusters(reset) {
  if (reset) { clustersAfter = null; $('clusters').replaceChildren(); }
  const data = await api('/api/clusters?size=' + PAGE + '&q=' + encodeURIComponent(query) + (clustersAfter ? '&after=' + encodeURIComponent(clustersAfter) : ''));
  $('cluster-count').textContent = data.total + ' clusters' + (query ? ' matching' : '') + ', largest first';
  // An index not yet signed or deduplicated: the step it lacks and the command that makes it.
  $('next-step').hidden = !data.missing;
  if (data.missing) { $('next-why').textContent = data.why + '. Run:'; $('next-step').querySelector('code').textContent = data.command; }
  for (const c of data.clusters) {
    const li = el('li', undefined, 'cluster');
    li.dataset.id = c.clusterId;
    li.append(el('span', c.size + ' documents', 'size'), el('div', c.canonical.snippet), el('div', 'canonical ' + c.canonical.id + (c.bestSimilarity !== null ? ' · best similarity ' + c.bestSimilarity.toFixed(3) : ''), 'muted'));
    li.onclick = () => openCluster(c.clusterId, li);
    $('clusters').append(li);
  }
  clustersAfter = data.next || null;
  $('more-clusters').hidden = !clustersAfter;
}

async function openCluster(id, li) {
  document.querySelectorAll('li.cluster.open').forEach((n) => n.classList.remove('open'));
  if (li) li.classList.add('open');
  currentCluster = id; membersAfter = null; picked.clear();
  $('members').replaceChildren(); $('cluster-id').textContent = id; $('cluster').hidden = false; $('compare').disabled = true;
  await loadMembers();
}

async function loadMembers() {
  const data = await api('/api/clusters/' + encodeURIComponent(currentCluster) + '/members?size=' + PAGE + (membersAfter ? '&after=' + encodeURIComponent(membersAfter) : ''));
  $('member-count').textContent = '(' + data.total + ' documents)';
  for (const m of data.members) {
    const tr = el('tr', undefined, 'member');
    tr.dataset.id = m.id;
    const box = el('input'); box.type = 'checkbox'; box.className = 'pick';
    box.onchange = () => { box.checked ? picked.add(m.id) : picked.delete(m.id); $('compare').disabled = picked.size !== 2; };
    const doc = el('td'); doc.append(el('div', m.id + (m.canonical ? ' (canonical)' : '')), el('div', m.snippet, 'muted'));
    const similar = el('button', 'similar'); similar.className = 'open-similar'; similar.onclick = () => openSimilar(m.id);
    const cells = [el('td'), doc, el('td', m.similarity === null ? '' : m.similarity.toFixed(3)), el('td', m.hamming === null ? '' : String(m.hamming)), el('td')];
    cells[0].append(box); cells[4].append(similar);
    tr.append(...cells);
    $('members').append(tr);
  }
  membersAfter = data.next || null;
  $('more-members').hidden = !membersAfter;
}

// The texts as the signatures saw them (after the index's normalizer) by default; as stored one click away.
const VIEW_NOTES = {
  normalized: (d) => 'after the normalizer ' + d.normalizer + ' the documents were signed with: the text the similarity was computed on',
  raw: (d) => d.notes ? d.notes.join('; ') : 'the fields as stored: markup, case, punctuation and spacing the signature ignored',
};

async function openPair(a, b) {
  currentPair = [a, b];
  const view = document.querySelector('input[name=view]:checked').value;
  const data = await api('/api/pair?a=' + encodeURIComponent(a) + '&b=' + encodeURIComponent(b) + '&view=' + view);
  $('pair-title').textContent = a + ' and ' + b;
  $('pair').dataset.view = data.view;
  $('view-' + data.view).checked = true;
  $('view-note').textContent = VIEW_NOTES[data.view](data);
  $('pair-note').textContent = (data.gaveUp ? 'too different to compare word by word in time: each text shown whole' : data.sharedWords + ' words in shared passages') + (data.cut[0] || data.cut[1] ? '; compared on the first ' + data.maxChars + ' characters' : '');
  const left = document.querySelector('.side.left'), right = document.querySelector('.side.right');
  left.replaceChildren(); right.replaceChildren();
  for (const s of data.segments) {
    if (s.kind === 'same') { const tag = s.shared ? 'mark' : 'span'; left.append(el(tag, s.text, s.shared ? 'shared' : '')); right.append(el(tag, s.text, s.shared ? 'shared' : '')); }
    else if (s.kind === 'removed') left.append(el('del', s.text));
    else right.append(el('ins', s.text));
  }
  $('pair').hidden = false;
  $('pair').scrollIntoView();
}

async function openSimilar(id) {
  const data = await api('/api/documents/' + encodeURIComponent(id) + '/similar');
  $('similar-id').textContent = id;
  const list = (target, hits, fmt) => { $(target).replaceChildren(...(hits.length ? hits.map((h) => { const li = el('li', fmt(h)); li.dataset.id = h.id; return li; }) : [el('li', 'none', 'muted')])); };
  list('similar-hits', data.similar, (h) => h.id + ': Jaccard ' + h.jaccard.toFixed(3) + ', ' + h.hamming + ' SimHash bits apart');
  list('partial-hits', data.partialCopies, (h) => h.id + ': ' + (h.containment !== undefined ? 'holds ' + (h.containment * 100).toFixed(0) + '% of it' : '') + (h.reverse_containment !== undefined ? ', ' + (h.reverse_containment * 100).toFixed(0) + '% of it is held' : ''));
  $('similar').hidden = false;
  $('similar').scrollIntoView();
}

async function loadReport() {
  const res = await fetch('/api/report');
  if (!res.ok) return;
  const report = await res.json();
  const r = report.recommendation;
  $('report-summary').textContent = report.pairs.total + ' pairs evaluated; recommended threshold ' + r.threshold + ' with b=' + r.bands + ', r=' + r.rows + ' (' + r.why + ')';
  for (const name of report.plots) { const img = el('img', undefined, 'plot'); img.src = '/report/' + name + '.svg'; img.alt = name; $('plots').append(img); }
  $('report').hidden = false;
}

$('more-clusters').onclick = () => loadClusters(false);
$('more-members').onclick = () => loadMembers();
$('compare').onclick = () => { const [a, b] = [...picked]; openPair(a, b); };
for (const radio of document.querySelectorAll('input[name=view]')) radio.onchange = () => { if (currentPair) openPair(...currentPair); };
let typing;
$('search').oninput = () => { clearTimeout(typing); typing = setTimeout(() => { query = $('search').value; loadClusters(true); }, 250); };
api('/api/info').then((info) => { $('index').textContent = info.index; document.title = 'near-dup: ' + info.index; });
loadClusters(true);
loadReport();
</script>
</body>
</html>
`;
