"use strict";
// The reviewer's page: decide items, see progress, download the file.  Every value is set with
// textContent.  scalar() and fileText() are reconciler/review/yaml_out.py's rule, written twice.
(function () {
  const data = JSON.parse(document.getElementById("review-data").textContent);
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
      count();
    });
    return button;
  }

  function count() {
    const items = current().items;
    const decided = items.filter((i) => i.decision).length;
    progress.textContent = decided + " of " + items.length + " decided";
    progress.dataset.decided = String(decided);
  }

  function draw() {
    const wanted = filter.value.trim().toLowerCase();
    body.replaceChildren();
    current().items.forEach((item, index) => {
      const text = [item.workspace, item.name || "", item.key].join(" ").toLowerCase();
      if (wanted && !text.includes(wanted)) return;
      if (openOnly.checked && item.decision) return;
      const row = document.createElement("tr");
      row.dataset.item = String(index);
      cell(row, (item.name ? item.name + " " : "") + item.workspace);
      cell(row, item.kind + " " + item.key);
      cell(row, item.role);
      cell(row, item.why).className = "why";
      const decide = cell(row, "");
      decide.className = "decide";
      decide.append(decideButton(item, "keep", row), " ", decideButton(item, "revoke", row));
      const reason = document.createElement("input");
      reason.className = "reason";
      reason.value = item.reason || "";
      reason.addEventListener("input", () => { item.reason = reason.value === "" ? null : reason.value; });
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
  select.addEventListener("change", draw);
  filter.addEventListener("input", draw);
  openOnly.addEventListener("change", draw);
  draw();
})();
