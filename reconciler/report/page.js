// The person and workspace views of the access report.  The data is the
// inline JSON block #report-data (escaped so it cannot end its script element);
// only the visible page of groups is put into the DOM, so the page opens
// quickly at 10,000 workspaces.  Every value is set with textContent, never
// as markup.
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("report-data").textContent);
  var W = data.w, C = data.r, WHY = data.why, UNMANAGED = data.unmanaged;
  var PAGE = 25, ROWS_PER_GROUP = 200;
  // The rows, a column at a time: column K's value of row i is C[K][i] (a block of columns is a
  // fraction of the work to write than one of rows); row(i) is row i as one array, for drawing it.
  var KW = 0, KKIND = 1, KKEY = 2, KROLE = 3, KEXT = 4, KWHY = 5, KEXP = 6;
  var CW = C[KW], CKIND = C[KKIND], CKEY = C[KKEY], CROLE = C[KROLE], CEXT = C[KEXT], CWHY = C[KWHY];
  function row(i) { return C.map(function (column) { return column[i]; }); }
  var WID = 0, WNAME = 1, WACC = 2, WHOME = 3, WMANAGED = 4, WOWNERS = 5;

  // Indexes, made once: rows by subject and by workspace, lower-cased text to search.
  var bySubject = new Map(), byWorkspace = [], wsText = [];
  for (var w = 0; w < W.length; w++) {
    byWorkspace.push([]);
    wsText.push((W[w][WID] + " " + (W[w][WNAME] || "") + " " + (W[w][WACC] || "")).toLowerCase());
  }
  for (var i = 0; i < CKEY.length; i++) {
    var subject = (CKIND[i] ? "domain " : "") + CKEY[i];
    var list = bySubject.get(subject);
    if (!list) { list = []; bySubject.set(subject, list); }
    list.push(i);
    byWorkspace[CW[i]].push(i);
  }
  // People first, then domains, each in code-point order (the default sort: no comparator to call).
  var people = [], domains = [];
  bySubject.forEach(function (rows, subject) { (subject.indexOf("domain ") === 0 ? domains : people).push(subject); });
  var subjects = people.sort().concat(domains.sort());

  var state = { view: "people", q: "", external: false, owners: false, unmanaged: false, page: 0 };
  var cache = null;

  // The view and filters live in the address's fragment (#view=workspaces&external=1&q=acme), so a
  // reviewer can send a link to exactly what they look at; the page reads it when it opens.
  function readFragment() {
    var params = new URLSearchParams(location.hash.slice(1));
    state.view = params.get("view") === "workspaces" ? "workspaces" : "people";
    state.q = (params.get("q") || "").trim().toLowerCase();
    ["external", "owners", "unmanaged"].forEach(function (name) { state[name] = params.get(name) === "1"; });
    document.getElementById("search").value = state.q;
    ["external", "owners", "unmanaged"].forEach(function (name) {
      document.getElementById("only-" + name).checked = state[name];
    });
    document.querySelectorAll(".tabs button").forEach(function (b) {
      b.setAttribute("aria-pressed", String(b.getAttribute("data-view") === state.view));
    });
  }

  function writeFragment() {
    var params = new URLSearchParams();
    if (state.view !== "people") params.set("view", state.view);
    ["external", "owners", "unmanaged"].forEach(function (name) { if (state[name]) params.set(name, "1"); });
    if (state.q) params.set("q", state.q);
    var hash = params.toString();
    try { history.replaceState(null, "", hash ? "#" + hash : location.pathname + location.search); } catch (e) { /* a file: URL may refuse */ }
  }

  function rowPasses(i) {
    return (!state.external || CEXT[i] === 1) && (!state.owners || CROLE[i] === "owner") &&
      (!state.unmanaged || CWHY[i] === UNMANAGED);
  }

  function rowMatches(i, q) {
    return !q || CKEY[i].indexOf(q) >= 0 || wsText[CW[i]].indexOf(q) >= 0;
  }

  // The groups (people or workspaces) with at least one row passing the filters and the search.
  function groups() {
    var key = [state.view, state.q, state.external, state.owners, state.unmanaged].join("\u0000");
    if (cache && cache.key === key) return cache.groups;
    var q = state.q, found = [], filtered = state.external || state.owners || state.unmanaged;
    if (state.view === "people" && !q && !filtered) {
      // Nothing to filter: every person and domain with all of their rows (the first paint).
      for (var a = 0; a < subjects.length; a++) found.push({ label: subjects[a], rows: bySubject.get(subjects[a]) });
    } else if (state.view === "people") {
      for (var s = 0; s < subjects.length; s++) {
        var rows = bySubject.get(subjects[s]).filter(function (i) { return rowPasses(i) && rowMatches(i, q); });
        if (rows.length) found.push({ label: subjects[s], rows: rows });
      }
    } else {
      for (var w = 0; w < W.length; w++) {
        var hit = !q || wsText[w].indexOf(q) >= 0;
        var ws = byWorkspace[w].filter(function (i) { return rowPasses(i) && (hit || rowMatches(i, q)); });
        var show = ws.length > 0 || (!filtered && hit) || (state.unmanaged && !W[w][WMANAGED] && hit);
        if (show) found.push({ ws: w, rows: ws });
      }
    }
    cache = { key: key, groups: found };
    return found;
  }

  function el(tag, text, cls) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = text;
    if (cls) node.className = cls;
    return node;
  }

  function badge(external) {
    return el("span", external ? "external" : "internal", "badge " + (external ? "external" : "internal"));
  }

  function whyCell(i) {
    return el("td", WHY[CWHY[i]], "why" + (CWHY[i] === UNMANAGED ? " unmanaged" : ""));
  }

  function workspaceCell(w) {
    var td = el("td", W[w][WNAME] || "(no name)");
    td.appendChild(document.createTextNode(" "));
    td.appendChild(el("span", W[w][WID], "id"));
    return td;
  }

  function groupHeader(tbody, parts) {
    var tr = el("tr"), th = el("th");
    th.colSpan = 5;
    parts.forEach(function (p) { th.appendChild(typeof p === "string" ? document.createTextNode(p) : p); });
    tr.appendChild(th);
    tbody.appendChild(tr);
  }

  function more(tbody, n) {
    if (n <= 0) return;
    var tr = el("tr"), td = el("td", "… and " + n + " more (narrow with the search box, or read access.csv)", "note");
    td.colSpan = 5;
    tr.appendChild(td);
    tbody.appendChild(tr);
  }

  function personGroup(table, g) {
    var first = row(g.rows[0]), tbody = el("tbody", null, "group");
    tbody.setAttribute("data-person", g.label);
    groupHeader(tbody, [g.label, badge(first[KEXT] === 1),
      " · " + g.rows.length + (g.rows.length === 1 ? " workspace" : " workspaces")]);
    g.rows.slice(0, ROWS_PER_GROUP).forEach(function (i) {
      var tr = el("tr"), values = row(i);
      tr.appendChild(workspaceCell(values[KW]));
      tr.appendChild(el("td", W[values[KW]][WACC] || ""));
      tr.appendChild(el("td", values[KROLE]));
      tr.appendChild(whyCell(i));
      tr.appendChild(el("td", values[KEXP] || ""));
      tbody.appendChild(tr);
    });
    more(tbody, g.rows.length - ROWS_PER_GROUP);
    table.appendChild(tbody);
  }

  function workspaceGroup(table, g) {
    var ws = W[g.ws], tbody = el("tbody", null, "group");
    tbody.setAttribute("data-workspace", ws[WID]);
    var parts = [ws[WNAME] || "(no name)", " ", el("span", ws[WID], "id")];
    if (ws[WACC]) parts.push(" · " + ws[WACC]);
    if (ws[WHOME] && ws[WHOME] !== ws[WID]) parts.push(" · group of " + ws[WHOME]);
    parts.push(" · " + ws[WOWNERS] + (ws[WOWNERS] === 1 ? " owner" : " owners"));
    if (ws[WOWNERS] <= 1) parts.push(el("span", ws[WOWNERS] ? "one owner" : "no owner", "badge warn"));
    if (!ws[WMANAGED]) parts.push(el("span", "not managed", "badge warn"));
    groupHeader(tbody, parts);
    if (!g.rows.length) {
      var none = el("tr"), td = el("td", "No one has access.", "note");
      td.colSpan = 5;
      none.appendChild(td);
      tbody.appendChild(none);
    }
    g.rows.slice(0, ROWS_PER_GROUP).forEach(function (i) {
      var tr = el("tr"), values = row(i), who = el("td", (values[KKIND] ? "domain " : "") + values[KKEY]);
      who.appendChild(badge(values[KEXT] === 1));
      tr.appendChild(who);
      tr.appendChild(el("td", values[KROLE]));
      tr.appendChild(whyCell(i));
      tr.appendChild(el("td", values[KEXP] || ""));
      tr.appendChild(el("td", ""));
      tbody.appendChild(tr);
    });
    more(tbody, g.rows.length - ROWS_PER_GROUP);
    table.appendChild(tbody);
  }

  var HEADS = { people: ["Workspace", "Account", "Role", "Why", "Expires"],
                workspaces: ["Person or domain", "Role", "Why", "Expires", ""] };

  function render() {
    var all = groups(), pages = Math.max(1, Math.ceil(all.length / PAGE));
    if (state.page >= pages) state.page = pages - 1;
    var shown = all.slice(state.page * PAGE, state.page * PAGE + PAGE);
    var table = el("table"), thead = el("thead"), tr = el("tr");
    HEADS[state.view].forEach(function (h) { tr.appendChild(el("th", h)); });
    thead.appendChild(tr);
    table.appendChild(thead);
    shown.forEach(function (g) { (state.view === "people" ? personGroup : workspaceGroup)(table, g); });
    var target = document.getElementById("rows");
    target.replaceChildren(all.length ? table : el("p", "Nothing matches.", "note"));
    var noun = state.view === "people" ? "people and domains" : "workspaces";
    var from = all.length ? state.page * PAGE + 1 : 0;
    document.getElementById("count").textContent =
      noun + " " + from + "–" + (state.page * PAGE + shown.length) + " of " + all.length;
    document.getElementById("page").textContent = "page " + (state.page + 1) + " of " + pages;
    document.getElementById("prev").disabled = state.page === 0;
    document.getElementById("next").disabled = state.page >= pages - 1;
  }

  function refilter() { state.page = 0; writeFragment(); render(); }

  var timer = null;
  document.getElementById("search").addEventListener("input", function (e) {
    clearTimeout(timer);
    timer = setTimeout(function () { state.q = e.target.value.trim().toLowerCase(); refilter(); }, 120);
  });
  ["external", "owners", "unmanaged"].forEach(function (name) {
    document.getElementById("only-" + name).addEventListener("change", function (e) {
      state[name] = e.target.checked; refilter();
    });
  });
  document.querySelectorAll(".tabs button").forEach(function (button) {
    button.addEventListener("click", function () {
      state.view = button.getAttribute("data-view");
      document.querySelectorAll(".tabs button").forEach(function (b) { b.setAttribute("aria-pressed", String(b === button)); });
      refilter();
    });
  });
  document.getElementById("prev").addEventListener("click", function () { state.page--; render(); });
  document.getElementById("next").addEventListener("click", function () { state.page++; render(); });

  readFragment();
  render();
  // When the first rows are on screen, for the tests and the benchmark to read.
  document.documentElement.setAttribute("data-first-rows-ms", performance.now().toFixed(0));
})();
