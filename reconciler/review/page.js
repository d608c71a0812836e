"use strict";
// The reviewer's page: decide items, see progress, download the file.  Every value is set with
// textContent.  scalar() and fileText() are reconciler/review/yaml_out.py's rule, written twice.
// Decisions made here are kept in localStorage under the campaign and its seal (reconciler/review/page.py's
// seal()), so a reload finds them and another campaign, or one started again, never does.
(function () {
  const data = JSON.parse(document.getElementById("review-data").textContent);
  const STORE = "reconciler-review:" + data.campaign + ":" + data.seal;
  const PLAIN = /^[A-Za-z][A-Za-z0-9_@.+\-]*$/;
  const WORDS = new Set(["y", "n", "yes", "no", "on", "off", "true", "false", "null"]);
  const FIELDS = ["workspace", "name", "kind", "key", "role", "why", "decision", "reason"];

  function scalar(value) {
    if (value === null || value === undefined) return "null";
    if (PLAIN.test(value) && !WORDS.has(value.toLowerCase())) return value;
    return JSON.stringify(value).replace(/[\x7f-\x84\x86-\x9f\ufffe\uffff]/g,
      (c) => "\\u" + c.charCodeAt(0).toString(16).padStart(4, "0"));
  }

  function fileText(reviewer) {
    const lines = ["# Access review " + data.campaign + ", due " + data.due +
                   ": set each decision to keep or revoke (a reason is optional).",
                   "reviewer: " + scalar(reviewer.reviewer)];
    if (!reviewer.items.length) {
      lines.push("items: []");
    } else {
      lines.push("items:");
      for (const item of reviewer.items) {
        FIELDS.forEach((field, index) => lines.push((index === 0 ? "  - " : "    ") + field + ": " + scalar(item[field])));
        if (item.removeFromTeam) lines.push("    removeFromTeam: true");
      }
    }
    return lines.join("\n") + "\n";
  }

  const select = document.getElementById("reviewer");
  const filter = document.getElementById("filter");
  const openOnly = document.getElementById("open-only");
  const body = document.getElementById("items");
  const progress = document.getElementById("progress");

  for (const [index, reviewer] of data.reviewers.entries()) {
    const option = document.createElement("option");
    option.value = String(index);
    option.textContent = reviewer.reviewer;
    select.appendChild(option);
  }

  function current() { return data.reviewers[Number(select.value)] || {reviewer: "", items: []}; }

  // --- kept in this browser: {reviewer: {item id: [decision, reason]}}, only the items decided here ----------
  const kept = document.getElementById("kept");
  function itemId(item) { return [item.workspace, item.kind, item.key, item.role].join("\n"); }
  for (const reviewer of data.reviewers) {
    for (const item of reviewer.items) item.original = [item.decision, item.reason];
  }
  function stored() {
    try {
      const found = JSON.parse(window.localStorage.getItem(STORE) || "{}");
      return found && typeof found === "object" ? found : {};
    } catch (e) {
      return {};
    }
  }
  function keep(reviewer, item) {
    const all = stored();
    const mine = all[reviewer.reviewer] || {};
    mine[itemId(item)] = [item.decision, item.reason];
    all[reviewer.reviewer] = mine;
    try {
      window.localStorage.setItem(STORE, JSON.stringify(all));
      kept.textContent = "Kept in this browser: " + Object.keys(mine).length + " of your decisions.";
    } catch (e) {
      kept.textContent = "This browser does not keep your decisions (" + e.name + "): download your file before " +
                         "you close the page.";
    }
  }
  function restore() {
    const all = stored();
    for (const reviewer of data.reviewers) {
      const mine = all[reviewer.reviewer];
      if (!mine) continue;
      for (const item of reviewer.items) {
        const found = mine[itemId(item)];
        if (!Array.isArray(found)) continue;
        item.decision = found[0] === "keep" || found[0] === "revoke" ? found[0] : null;
        item.reason = typeof found[1] === "string" ? found[1] : null;
      }
    }
  }
  function forget() {
    const reviewer = current();
    const all = stored();
    delete all[reviewer.reviewer];
    try {
      if (Object.keys(all).length) window.localStorage.setItem(STORE, JSON.stringify(all));
      else window.localStorage.removeItem(STORE);
    } catch (e) { /* nothing kept, nothing to forget */ }
    for (const item of reviewer.items) [item.decision, item.reason] = item.original;
    draw();
    kept.textContent = "Forgotten: the decisions are the file's again.";
  }

  // --- what a decision does ----------------------------------------------------------------------------------
  function shareKey(item) { return item.list === null || item.list === undefined ? null : [item.list, item.kind, item.key].join("\n"); }
  function conflicts(item) {
    // Another item of one list (any reviewer), same entry, decided the other way: one list holds one entry.
    const key = shareKey(item);
    if (key === null || !item.decision) return [];
    const found = [];
    for (const reviewer of data.reviewers) {
      for (const other of reviewer.items) {
        if (other !== item && other.decision && other.decision !== item.decision && shareKey(other) === key) {
          found.push((other.decision === "keep" ? "kept" : "revoked") + " on " + other.workspace + " by " +
                     reviewer.reviewer);
        }
      }
    }
    return found;
  }
  function effects(item, td) {
    td.replaceChildren();
    const line = (text, className) => {
      const p = document.createElement("p");
      p.textContent = text;
      if (className) p.className = className;
      td.appendChild(p);
      return p;
    };
    if (item.kind === "domain") {
      const badge = document.createElement("span");
      badge.className = "badge warn domain-wide";
      badge.textContent = "everyone at " + item.key;
      td.appendChild(badge);
      line("A domain entry lets in everyone with an address at " + item.key + " (how many people is not known).");
    }
    if (item.list !== null && item.list !== undefined) {
      const others = data.lists[item.list].filter((label) => label !== item.workspace &&
                                                            !label.startsWith(item.workspace + " "));
      const shown = others.slice(0, 10).join(", ") + (others.length > 10 ? " and " + (others.length - 10) + " more" : "");
      line("Shared list: " + item.workspace + " holds one list with " + shown + "; a keep or revoke here is one " +
           "for all of them.", "shared");
      const against = conflicts(item);
      if (against.length) {
        line("Conflict: " + against.join("; ") + ": one list, one decision.", "conflict");
      }
    }
    if (item.ensured.length) {
      line("Ensured by " + item.ensured.join(", ") + ": the manifests put it back.", "ensured");
    }
  }
  function redrawEffects() {
    for (const row of body.querySelectorAll("tr[data-item]")) {
      effects(current().items[Number(row.dataset.item)], row.querySelector("td.effects"));
    }
  }

  function cell(row, value) {
    const td = document.createElement("td");
    td.textContent = value;
    row.appendChild(td);
    return td;
  }

  function decideButton(item, decision, row) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = decision;
    button.dataset.decision = decision;
    button.textContent = decision;
    button.setAttribute("aria-pressed", String(item.decision === decision));
    button.addEventListener("click", () => {
      item.decision = item.decision === decision ? null : decision;
      for (const other of row.querySelectorAll("button[data-decision]")) {
        other.setAttribute("aria-pressed", String(item.decision === other.dataset.decision));
      }
      keep(current(), item);
      count();
      if (item.list !== null && item.list !== undefined) redrawEffects();
    });
    return button;
  }

  function count() {
    const items = current().items;
    const mine = stored()[current().reviewer];
    const held = mine ? Object.keys(mine).length : 0;
    if (held && !kept.textContent) kept.textContent = "Kept in this browser: " + held + " of your decisions.";
    const decided = items.filter((i) => i.decision).length;
    progress.textContent = decided + " of " + items.length + " decided";
    progress.dataset.decided = String(decided);
  }

  function draw() {
    kept.textContent = "";
    const wanted = filter.value.trim().toLowerCase();
    body.replaceChildren();
    current().items.forEach((item, index) => {
      const text = [item.workspace, item.name || "", item.key].join(" ").toLowerCase();
      if (wanted && !text.includes(wanted)) return;
      if (openOnly.checked && item.decision) return;
      const row = document.createElement("tr");
      row.dataset.item = String(index);
      row.dataset.entry = item.workspace + " " + item.key;
      cell(row, (item.name ? item.name + " " : "") + item.workspace);
      cell(row, item.kind + " " + item.key);
      cell(row, item.role);
      cell(row, item.why).className = "why";
      const decide = cell(row, "");
      decide.className = "decide";
      decide.append(decideButton(item, "keep", row), " ", decideButton(item, "revoke", row));
      if (item.ensured.length) {
        const note = document.createElement("span");
        note.className = "will-not-hold";
        note.textContent = "A revoke will not hold: " + item.ensured.join(", ") + " ensures it here; change the rule.";
        decide.appendChild(note);
      }
      const does = cell(row, "");
      does.className = "effects";
      effects(item, does);
      const reason = document.createElement("input");
      reason.className = "reason";
      reason.value = item.reason || "";
      reason.addEventListener("input", () => {
        item.reason = reason.value === "" ? null : reason.value;
        keep(current(), item);
      });
      cell(row, "").appendChild(reason);
      body.appendChild(row);
    });
    count();
  }

  document.getElementById("download").addEventListener("click", () => {
    const reviewer = current();
    const link = document.createElement("a");
    link.href = URL.createObjectURL(new Blob([fileText(reviewer)], {type: "application/x-yaml"}));
    link.download = reviewer.reviewer + ".yaml";
    document.body.appendChild(link);
    link.click();
    link.remove();
  });
  document.getElementById("forget").addEventListener("click", forget);
  select.addEventListener("change", draw);
  filter.addEventListener("input", draw);
  openOnly.addEventListener("change", draw);
  restore();
  draw();
})();
