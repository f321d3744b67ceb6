/* autonesy viewer: the sweep's results table (filter, search, sort, pages), lazy timeline items,
   plots, and live updates. Plain DOM: every value is written with textContent, never as HTML;
   only fragments the server rendered (and escaped) are inserted as HTML. */
(function () {
  "use strict";
  var PAGE_SIZE = 50;
  var POLL_MS = 5000;

  function el(tag, text, cls) {
    var node = document.createElement(tag);
    if (text !== undefined && text !== null) node.textContent = String(text);
    if (cls) node.className = cls;
    return node;
  }

  /* ------------------------------------------------------------ lazy timeline items */
  document.addEventListener("toggle", function (event) {
    var details = event.target;
    if (!details.open || !details.dataset || !details.dataset.src || details.dataset.loaded) return;
    details.dataset.loaded = "1";
    var body = details.querySelector(".body");
    fetch(details.dataset.src).then(function (response) {
      if (!response.ok) throw new Error(response.status + " " + response.statusText);
      return response.text();
    }).then(function (html) {
      body.innerHTML = html;  /* rendered and escaped by the server's templates */
    }).catch(function (error) {
      body.textContent = "could not load: " + error.message;
      delete details.dataset.loaded;
    });
  }, true);

  /* ------------------------------------------------------------------ results table */
  function unpack(table) {  /* {columns, rows: [[…]]} → [{column: value}] */
    return table.rows.map(function (values) {
      var row = {};
      table.columns.forEach(function (column, i) { row[column] = values[i]; });
      return row;
    });
  }

  function ResultsTable(section) {
    this.section = section;
    this.tbody = section.querySelector("#rows tbody");
    this.columns = Array.prototype.map.call(section.querySelectorAll("#rows th"), function (th) { return th.dataset.sort; });
    this.selects = Array.prototype.slice.call(section.querySelectorAll("select[data-filter]"));
    this.search = section.querySelector("#search");
    this.rows = [];
    this.page = 0;
    this.sortKey = null;
    this.sortDir = 1;
    var params = new URLSearchParams(window.location.search);
    var self = this;
    this.selects.forEach(function (select) {
      select.dataset.wanted = params.get(select.dataset.filter) || "";
      select.addEventListener("change", function () { self.page = 0; self.render(); });
    });
    this.search.value = params.get("q") || "";
    this.search.addEventListener("input", function () { self.page = 0; self.render(); });
    section.querySelectorAll("#rows th").forEach(function (th) {
      th.addEventListener("click", function () {
        self.sortDir = self.sortKey === th.dataset.sort ? -self.sortDir : 1;
        self.sortKey = th.dataset.sort;
        section.querySelectorAll("#rows th").forEach(function (h) { h.classList.remove("asc", "desc"); });
        th.classList.add(self.sortDir > 0 ? "asc" : "desc");
        self.render();
      });
    });
    section.querySelector("#prev").addEventListener("click", function () { self.page = Math.max(0, self.page - 1); self.render(); });
    section.querySelector("#next").addEventListener("click", function () { self.page += 1; self.render(); });
    var embedded = section.querySelector("#rows-data");
    if (embedded) {
      this.load(unpack(JSON.parse(embedded.textContent)));
    } else {
      this.fetch();
    }
  }

  ResultsTable.prototype.fetch = function () {
    var self = this;
    fetch(this.section.dataset.src).then(function (r) {
      if (!r.ok) throw new Error(r.status + " " + r.statusText);
      return r.json();
    }).then(function (data) {
      self.load(unpack(data));
      var live = document.getElementById("live");
      if (data.live) {
        setTimeout(function () { self.fetch(); }, POLL_MS);
      } else if (live) {
        live.textContent = "finished";
      }
    }).catch(function (error) {
      self.section.querySelector("#shown").textContent = "could not load the rows: " + error.message;
    });
  };

  ResultsTable.prototype.load = function (rows) {
    var counts = {};
    rows.forEach(function (row) { counts[row.status] = (counts[row.status] || 0) + 1; });
    var line = document.getElementById("counts");
    if (line) {
      line.replaceChildren(document.createTextNode(rows.length + " attempts: "));
      Object.keys(counts).sort().forEach(function (status) {
        line.appendChild(el("span", status + " " + counts[status], "status status-" + status));
        line.appendChild(document.createTextNode(" "));
      });
    }
    var signature = rows.map(function (row) { return row.attempt_id + row.status; }).join();
    if (this.signature !== signature) loadSummary();  /* after the table: it is what one waits for */
    this.signature = signature;
    rows.forEach(function (row) {
      row._text = [row.attempt_id, row.task, row.llm, row.format, row.prompt, row.detail, row.policy, row.status,
                   row.relation, row.reason].join(" ").toLowerCase();
    });
    this.rows = rows;
    var self = this;
    this.selects.forEach(function (select) {
      var key = select.dataset.filter;
      var current = select.value || select.dataset.wanted;
      var values = {};
      rows.forEach(function (row) { values[row[key] === null || row[key] === undefined ? "" : String(row[key])] = true; });
      while (select.options.length > 1) select.remove(1);
      Object.keys(values).sort().forEach(function (value) {
        var option = el("option", value === "" ? "(none)" : value);
        option.value = value === "" ? "\u0000" : value;
        select.appendChild(option);
      });
      select.value = current;
      if (select.value !== current) select.value = "";
    });
    this.render();
  };

  ResultsTable.prototype.filtered = function () {
    var wanted = this.selects.map(function (s) { return [s.dataset.filter, s.value]; })
      .filter(function (pair) { return pair[1] !== ""; });
    var needle = this.search.value.trim().toLowerCase();
    var out = this.rows.filter(function (row) {
      for (var i = 0; i < wanted.length; i++) {
        var value = row[wanted[i][0]];
        var text = value === null || value === undefined ? "\u0000" : String(value);
        if (text !== wanted[i][1]) return false;
      }
      return !needle || row._text.indexOf(needle) >= 0;
    });
    if (this.sortKey) {
      var key = this.sortKey, dir = this.sortDir;
      out.sort(function (a, b) {
        var x = a[key], y = b[key];
        if (x === y) return 0;
        if (x === null || x === undefined) return 1;
        if (y === null || y === undefined) return -1;
        return (typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y))) * dir;
      });
    }
    return out;
  };

  ResultsTable.prototype.render = function () {
    var start = performance.now();
    var rows = this.filtered();
    var pages = Math.max(1, Math.ceil(rows.length / PAGE_SIZE));
    this.page = Math.min(this.page, pages - 1);
    var fragment = document.createDocumentFragment();
    var columns = this.columns;
    rows.slice(this.page * PAGE_SIZE, (this.page + 1) * PAGE_SIZE).forEach(function (row) {
      var tr = el("tr");
      columns.forEach(function (key, i) {
        var value = row[key];
        if (typeof value === "number" && !Number.isInteger(value)) value = value.toFixed(3);
        if (value === null || value === undefined) value = "";
        var td = el("td", null, key === "status" ? key + " status-" + value : key);
        if (i === 0) {
          var a = el("a", value);
          a.setAttribute("href", row.href);
          td.appendChild(a);
        } else {
          td.textContent = String(value);
        }
        tr.appendChild(td);
      });
      fragment.appendChild(tr);
    });
    this.tbody.replaceChildren(fragment);
    this.section.querySelector("#shown").textContent = rows.length + " of " + this.rows.length + " attempts";
    this.section.querySelector("#page").textContent = "page " + (this.page + 1) + " of " + pages;
    this.section.querySelector("#prev").disabled = this.page === 0;
    this.section.querySelector("#next").disabled = this.page >= pages - 1;
    this.section.dataset.renderMs = (performance.now() - start).toFixed(1);  /* read by benchmarks/viewer_load.py */
  };


  /* ------------------------------------------------------------- report and plots */
  var plotly = null;

  function loadPlotly() {  /* plotly.js is large: fetched only when a page has plots */
    if (!plotly) {
      plotly = new Promise(function (resolve, reject) {
        var script = document.createElement("script");
        script.src = document.body.dataset.plotly;
        script.onload = function () { resolve(window.Plotly); };
        script.onerror = function () { reject(new Error("could not load plotly.js")); };
        document.head.appendChild(script);
      });
    }
    return plotly;
  }

  function drawPlots(root) {
    var data = root.querySelector("script.plots-data");
    if (!data) return;
    var figures = JSON.parse(data.textContent);
    loadPlotly().then(function (Plotly) {
      figures.forEach(function (figure) {
        Plotly.newPlot(root.querySelector("#plot-" + figure.id), figure.data, figure.layout,
                       {displaylogo: false, responsive: true, displayModeBar: "hover"});
      });
    });
  }

  function loadSummary() {
    var summary = document.getElementById("summary");
    if (!summary) return;
    if (!summary.dataset.src) { drawPlots(summary); return; }
    fetch(summary.dataset.src).then(function (r) {
      if (!r.ok) throw new Error(r.status + " " + r.statusText);
      return r.text();
    }).then(function (html) {
      summary.innerHTML = html;  /* rendered and escaped by the server's templates */
      drawPlots(summary);
    }).catch(function (error) {
      summary.textContent = "could not compute the tables: " + error.message;
    });
  }

  var results = document.getElementById("results");
  if (results) new ResultsTable(results); else loadSummary();

  /* ------------------------------------------------------- a running attempt reloads */
  if (document.querySelector("[data-reload]") && window.location.protocol !== "file:") {
    setTimeout(function () { window.location.reload(); }, POLL_MS);
  }
})();
