// SPDX-License-Identifier: GPL-2.0-only
// The flame graph's script: export/svg.c embeds this file, from the line
// after the first blank one, at the end of every SVG it writes, and calls
// the function with the graph's total, its unit, and the left edge and
// width of the frames in px. Frames carry their left edge and count
// (data-s, data-n, in the profile's unit) so that zooming and the matched
// share are exact; the name is the <title> up to its last " (".
// tests/e2e/svg.sh parses it with node.

(function (total, unit, X0, W) {
	"use strict";
	var PAD = 3, CHAR_W = 7.2, MATCH = "rgb(230,0,230)";
	var byId = function (id) { return document.getElementById(id); };
	var box = byId("frames"), details = byId("details"), matched = byId("matched");
	var unzoomBtn = byId("unzoom"), searchBtn = byId("search");
	var frames = [], zoomed = null, search = null;

	function withCommas(n) { return String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ","); }

	function label(name, w) {
		var fit = Math.floor((w - 2 * PAD) / CHAR_W);
		if (fit < 3)
			return "";
		return name.length <= fit ? name : name.slice(0, fit - 2) + "..";
	}

	function place(f, x, w) {
		f.rect.setAttribute("x", x.toFixed(2));
		f.rect.setAttribute("width", w.toFixed(2));
		f.text.setAttribute("x", (x + PAD).toFixed(2));
		f.text.textContent = label(f.name, w);
	}

	/* Ancestors span the graph, dimmed; descendants scale; the rest hide. */
	function zoom(z) {
		if (z === frames[0])
			return unzoom();
		zoomed = z;
		frames.forEach(function (f) {
			var below = f.y > z.y, show;
			if (below)
				show = f.s <= z.s && f.s + f.n >= z.s + z.n;
			else
				show = f.s >= z.s && f.s + f.n <= z.s + z.n;
			f.g.classList.toggle("hide", !show);
			f.g.classList.toggle("anc", show && below);
			if (show && below)
				place(f, X0, W);
			else if (show)
				place(f, X0 + (f.s - z.s) / z.n * W, f.n / z.n * W);
		});
		unzoomBtn.classList.remove("hide");
	}

	function unzoom() {
		if (!zoomed)
			return;
		zoomed = null;
		frames.forEach(function (f) {
			f.g.classList.remove("hide", "anc");
			place(f, f.x, f.w);
		});
		unzoomBtn.classList.add("hide");
	}

	/* Matches nest (a caller and its callee): count the union of their spans. */
	function searchFor(re) {
		var hits = [], sum = 0, end = 0;
		frames.forEach(function (f) {
			var hit = re.test(f.name);
			f.rect.setAttribute("fill", hit ? MATCH : f.fill);
			if (hit)
				hits.push(f);
		});
		hits.sort(function (a, b) { return a.s - b.s; });
		hits.forEach(function (f) {
			if (f.s + f.n > end) {
				sum += f.s + f.n - Math.max(f.s, end);
				end = f.s + f.n;
			}
		});
		search = re;
		searchBtn.textContent = "Reset search";
		matched.textContent = "Matched: " + (total ? 100 * sum / total : 0).toFixed(2) +
			"% (" + withCommas(sum) + " " + unit + ", " + hits.length + " frames)";
	}

	function resetSearch() {
		if (!search)
			return;
		search = null;
		frames.forEach(function (f) { f.rect.setAttribute("fill", f.fill); });
		searchBtn.textContent = "Search";
		matched.textContent = " ";
	}

	function ask() {
		var term = window.prompt("Search frames (regular expression):",
					 search ? search.source : ""), re;
		if (term === null || term === "")
			return;
		try {
			re = new RegExp(term);
		} catch (e) {
			window.alert("Not a regular expression: " + e.message);
			return;
		}
		searchFor(re);
	}

	function frameOf(node) {
		while (node && node !== box && !node.flame)
			node = node.parentNode;
		return node && node.flame;
	}

	Array.prototype.forEach.call(box.getElementsByTagName("g"), function (g) {
		var title = g.getElementsByTagName("title")[0].textContent;
		var rect = g.getElementsByTagName("rect")[0];
		g.flame = {
			g: g, rect: rect, text: g.getElementsByTagName("text")[0], title: title,
			name: title.slice(0, title.lastIndexOf(" (")),
			s: +g.getAttribute("data-s"), n: +g.getAttribute("data-n"),
			x: +rect.getAttribute("x"), w: +rect.getAttribute("width"),
			y: +rect.getAttribute("y"), fill: rect.getAttribute("fill")
		};
		frames.push(g.flame);
	});
	box.addEventListener("click", function (e) {
		var f = frameOf(e.target);
		if (f)
			zoom(f);
	});
	box.addEventListener("mouseover", function (e) {
		var f = frameOf(e.target);
		if (f)
			details.textContent = f.title;
	});
	box.addEventListener("mouseout", function () { details.textContent = " "; });
	unzoomBtn.addEventListener("click", unzoom);
	searchBtn.addEventListener("click", function () {
		if (search)
			resetSearch();
		else
			ask();
	});
	// A graph taller than the window opens at its root (the bottom), not its thin top.
	window.scrollTo(0, document.documentElement.scrollHeight);
	window.addEventListener("keydown", function (e) {
		var find = (e.ctrlKey || e.metaKey) && (e.key === "f" || e.key === "F");
		if (find || (e.key === "/" && !e.ctrlKey && !e.metaKey && !e.altKey)) {
			e.preventDefault();
			ask();
		} else if (e.key === "Escape") {
			unzoom();
			resetSearch();
		}
	});
})
