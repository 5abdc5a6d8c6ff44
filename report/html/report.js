/* SPDX-License-Identifier: MIT */
/* Draws the HTML report (inlined by report/output_html.c) from the JSON
 * document in #cs-data: summary, tables, per-function histograms and
 * call-site bars, per-size-class means, series over time.  No network,
 * no libraries: DOM and SVG only. */
(function () {
	'use strict';

	var SVGNS = 'http://www.w3.org/2000/svg';
	/* A browser stays responsive with this many table rows and charts;
	 * the rest is in the data (and in --format csv). */
	var MAX_ROWS = 1000, MAX_CHARTED = 100, MAX_BARS = 20;
	var data, root;

	function el(tag, attrs, text) {
		var e = document.createElement(tag), k;

		for (k in attrs || {})
			e.setAttribute(k, attrs[k]);
		if (text !== undefined && text !== null)
			e.textContent = String(text);
		return e;
	}

	function sv(tag, attrs, text) {
		var e = document.createElementNS(SVGNS, tag), k;

		for (k in attrs || {})
			e.setAttribute(k, attrs[k]);
		if (text !== undefined && text !== null)
			e.textContent = String(text);
		return e;
	}

	function add(parent, child) {
		parent.appendChild(child);
		return child;
	}

	/* Like the table output: up to 5 digits as they are, then k, M, G... */
	function human(v) {
		var s = 'kMGTPE', i = 0;

		if (v === null || v === undefined || isNaN(v))
			return '-';
		if (Math.abs(v) < 100000) {
			if (v === Math.floor(v))
				return String(v);
			return Math.abs(v) < 1 ? v.toPrecision(2) : v.toFixed(1);
		}
		v /= 1000;
		while (Math.abs(v) >= 999.5 && i < s.length - 1) {
			v /= 1000;
			i++;
		}
		return (Math.abs(v) >= 99.95 ? v.toFixed(0) : Math.abs(v) >= 9.995 ? v.toFixed(1) : v.toFixed(2)) + s[i];
	}

	/* The names to show: demangled C++ names where the document has
	 * them (not with --no-demangle), else the names as they are. */
	function fname(f) {
		return f.function_demangled || f.function;
	}

	function csname(c) {
		return c.callsite_demangled || c.callsite;
	}

	function evname(i) {
		return data.events[i].name;
	}

	function unit(i) {
		return data.events[i].kind === 'tsc' ? 'TSC ticks' : 'per call';
	}

	/* ---- summary ---- */

	function summary() {
		var t = add(root, el('table', {class: 'summary', id: 'cs-summary'})), progs = [], pids = [];
		var ov = [], i, f;

		function line(k, v, cls) {
			var tr = add(t, el('tr'));

			add(tr, el('td', {}, k));
			add(tr, el('td', cls ? {class: cls} : {}, v));
		}
		for (i = 0; i < data.files.length; i++) {
			f = data.files[i];
			if (progs.indexOf(f.program) < 0)
				progs.push(f.program);
			pids.push(f.pid);
			if (f.incomplete)
				line('incomplete', f.path + ': the program had not finished (still running or killed)', 'warn');
		}
		line('program', progs.join(', ') || '?');
		line(pids.length === 1 ? 'pid' : 'pids', pids.join(', '));
		line('files', data.files.length);
		line('events', data.events.map(function (e) {
			return e.name + (e.counted ? '' : ' (not counted)');
		}).join(', ') || 'none');
		line('calls', human(data.totals.calls) + ' measured' +
			(data.totals.dropped ? ', ' + human(data.totals.dropped) + ' dropped' : ''));
		if (data.totals.not_returned)
			line('did not return', human(data.totals.not_returned));
		if (data.totals.lost_calls)
			line('not recorded', human(data.totals.lost_calls) +
				(data.totals.lost_why && data.totals.lost_why.length ?
					' (' + data.totals.lost_why.join(', ').replace(/_/g, ' ') + ')' : ''));
		for (i = 0; i < data.events.length; i++)
			if (data.events[i].overhead !== null)
				ov.push(data.events[i].name + ' ' + human(data.events[i].overhead));
		if (ov.length)
			line('overhead', ov.join(', ') + ' (median per call around an empty function' +
				(data.overhead_subtracted ? ', subtracted' : '') + ')');
		line('values', data.view === 'exclusive' ?
			'exclusive (self): the calls of nested targets taken out' : 'inclusive');
		/* What the files lack and why, as the shim said it. */
		(data.notes || []).forEach(function (n) {
			line('note', n.text + (n.files < data.files.length ?
				' [' + n.files + ' of ' + data.files.length + ' files]' : ''), 'warn');
		});
	}

	/* ---- sortable tables ---- */

	function table(cols, rows, id) {
		var t = el('table', {class: 'cs', id: id}), tr = add(t, el('tr')), body = el('tbody');
		var dir = {};

		function fill() {
			body.textContent = '';
			rows.slice(0, MAX_ROWS).forEach(function (r) {
				var tr = add(body, el('tr'));

				cols.forEach(function (c, j) {
					add(tr, el('td', c.text ? {class: 't', title: r[j]} : {},
						c.text ? r[j] : human(r[j])));
				});
			});
		}
		cols.forEach(function (c, j) {
			var th = add(tr, el('th', c.text ? {class: 't'} : {}, c.name));

			th.addEventListener('click', function () {
				dir[j] = -(dir[j] || (c.text ? -1 : 1));
				rows.sort(function (a, b) {
					var x = a[j], y = b[j];

					if (x === y)
						return 0;
					if (x === null || x === undefined)
						return 1;
					if (y === null || y === undefined)
						return -1;
					return (x < y ? -1 : 1) * dir[j];
				});
				fill();
			});
		});
		t.appendChild(body);
		fill();
		if (rows.length <= MAX_ROWS)
			return t;
		var d = el('div');

		add(d, t);
		add(d, el('p', {class: 'note'}, (rows.length - MAX_ROWS) + ' more rows not shown (sorting ' +
			'sees them all); every row: cacheshim report --format csv'));
		return d;
	}

	function anyNested(ev) {
		return data.functions.some(function (f) {
			return f.events[ev].exclusive !== undefined;
		});
	}

	function tables() {
		var sec = add(root, el('section', {id: 'cs-tables'})), ev;

		add(sec, el('h2', {}, 'Tables'));
		for (ev = 0; ev < data.events.length; ev++) {
			var nested = anyNested(ev), cols, rows = [], srows = [];

			add(sec, el('h3', {}, evname(ev) + ' (' + unit(ev) + ')'));
			if (!data.events[ev].counted) {
				add(sec, el('p', {class: 'warn'}, 'not counted (the event could not be opened)'));
				continue;
			}
			cols = [{name: 'function', text: 1}, {name: 'calls'}, {name: 'mean'}];
			if (nested)
				cols.push({name: 'incl'}, {name: 'self'});
			cols.push({name: 'stddev'}, {name: 'min'}, {name: 'p50'}, {name: 'p90'},
				{name: 'p99'}, {name: 'max'}, {name: 'total'});
			data.functions.forEach(function (f) {
				var e = f.events[ev], s = e.stats, r;

				if (!s)
					return;
				r = [fname(f), s.calls, s.mean];
				if (nested)
					r.push(e.inclusive ? e.inclusive.mean : s.mean,
						e.exclusive ? e.exclusive.mean : s.mean);
				r.push(s.stddev, s.min, s.p50, s.p90, s.p99, s.max, s.total);
				rows.push(r);
				if (data.by === 'callsite')
					f.callsites.forEach(function (c) {
						var t = c.events[ev].stats;

						if (t)
							srows.push([fname(f), csname(c), c.module, t.calls,
								t.mean, t.p50, t.p99, t.max, t.total]);
					});
			});
			rows.sort(function (a, b) {
				return b[b.length - 1] - a[a.length - 1];
			});
			add(sec, el('h4', {}, 'per function'));
			add(sec, table(cols, rows, 'cs-fn-' + ev));
			if (srows.length) {
				srows.sort(function (a, b) {
					return b[8] - a[8];
				});
				add(sec, el('h4', {}, 'per call site'));
				add(sec, table([{name: 'function', text: 1}, {name: 'callsite', text: 1},
					{name: 'module', text: 1}, {name: 'calls'}, {name: 'mean'},
					{name: 'p50'}, {name: 'p99'}, {name: 'max'}, {name: 'total'}],
				srows, 'cs-cs-' + ev));
			}
		}
	}

	/* ---- charts ---- */

	/* Nice upper bound and ticks for [0, max]. */
	function ticks(max, n) {
		var step, mag, t = [], v;

		if (!(max > 0))
			max = 1;
		step = max / n;
		mag = Math.pow(10, Math.floor(Math.log10(step)));
		step = [1, 2, 5, 10].map(function (m) {
			return m * mag;
		}).filter(function (s) {
			return s >= step;
		})[0];
		if (step < 1 && max >= 1)
			step = 1;
		for (v = 0; v <= max + step * 0.999; v += step)
			t.push(v);
		return t;
	}

	function yaxis(g, x0, y0, h, w, max) {
		var t = ticks(max, 4), top = t[t.length - 1];

		t.forEach(function (v) {
			var y = y0 - v / top * h;

			add(g, sv('line', {class: 'grid', x1: x0, x2: x0 + w, y1: y, y2: y}));
			add(g, sv('text', {x: x0 - 4, y: y + 4, 'text-anchor': 'end'}, human(v)));
		});
		add(g, sv('line', {class: 'axis', x1: x0, x2: x0, y1: y0, y2: y0 - h}));
		add(g, sv('line', {class: 'axis', x1: x0, x2: x0 + w, y1: y0, y2: y0}));
		return top;
	}

	/* Histogram of one function and event: one bar per non-empty bucket,
	 * in value order (gaps between buckets are not drawn). */
	function histogram(f, ev) {
		var h = f.events[ev].histogram, W = 520, H = 190, L = 50, B = 40, w = W - L - 10;
		var s = sv('svg', {class: 'cs-hist', width: W, height: H, role: 'img'});
		var max = 0, bw, top, i, lbl;

		h.forEach(function (b) {
			max = Math.max(max, b[2]);
		});
		top = yaxis(s, L, H - B, H - B - 24, w, max);
		bw = w / h.length;
		lbl = Math.max(1, Math.ceil(h.length / 6));
		for (i = 0; i < h.length; i++) {
			var b = h[i], bh = b[2] / top * (H - B - 24);
			var r = add(s, sv('rect', {class: 'bar', x: L + i * bw + 1, y: H - B - bh,
				width: Math.max(1, bw - 2), height: bh}));

			add(r, sv('title', {}, (b[0] === b[1] ? b[0] : b[0] + '-' + b[1]) + ': ' + b[2] + ' calls'));
			if (i % lbl === 0 || i === h.length - 1)
				add(s, sv('text', {x: L + (i + 0.5) * bw, y: H - B + 14,
					'text-anchor': i && i === h.length - 1 ? 'end' : 'middle'}, human(b[0])));
		}
		add(s, sv('text', {x: L + w / 2, y: H - 6, 'text-anchor': 'middle'},
			evname(ev) + ' per call (bucket lower bound' +
			/* The buckets are never shifted (the schema): with -s
			 * only the heading above has the overhead off. */
			(data.overhead_subtracted ? ', as measured' : '') + ')'));
		add(s, sv('text', {x: 4, y: 10}, 'calls'));
		return s;
	}

	/* Horizontal bars: one per labelled value. */
	function hbars(items, cls, title, what) {
		var W = 520, L = 200, R = 70, BH = 18, H = items.length * BH + 30, max = 0;
		var s = sv('svg', {class: cls, width: W, height: H, role: 'img'});

		items.forEach(function (it) {
			max = Math.max(max, it.v);
		});
		if (!(max > 0))
			max = 1;
		items.forEach(function (it, i) {
			var y = 8 + i * BH, bw = it.v / max * (W - L - R);
			var r = add(s, sv('rect', {class: what, x: L, y: y, width: Math.max(1, bw), height: BH - 4}));
			var name = it.label.length > 32 ? it.label.slice(0, 30) + '...' : it.label;

			add(r, sv('title', {}, it.label + ': ' + it.tip));
			add(s, sv('text', {x: L - 6, y: y + BH - 8, 'text-anchor': 'end'}, name));
			add(s, sv('text', {x: L + Math.max(1, bw) + 4, y: y + BH - 8}, human(it.v)));
		});
		add(s, sv('text', {x: L, y: H - 6}, title));
		return s;
	}

	function functions() {
		var sec = add(root, el('section', {id: 'cs-functions'}));

		add(sec, el('h2', {}, 'Functions'));
		/* The busiest first: by calls. */
		var fs = data.functions.slice().sort(function (a, b) {
			return b.calls - a.calls;
		});

		if (fs.length > MAX_CHARTED)
			add(sec, el('p', {class: 'note'}, 'The ' + MAX_CHARTED + ' functions with the most calls ' +
				'of ' + fs.length + '.'));
		fs.slice(0, MAX_CHARTED).forEach(function (f) {
			var box = el('div', {class: 'charts'}), ev, any = 0;

			for (ev = 0; ev < data.events.length; ev++) {
				var e = f.events[ev], d;

				if (!e.stats)
					continue;
				any = 1;
				d = add(box, el('div', {class: 'chart'}));
				add(d, el('h4', {}, evname(ev) + ': mean ' + human(e.stats.mean) + ', p50 ' +
					human(e.stats.p50) + ', p99 ' + human(e.stats.p99) + ', ' +
					human(e.stats.calls) + ' calls'));
				add(d, histogram(f, ev));
				if (data.by === 'callsite') {
					var bars = f.callsites.filter(function (c) {
						return c.events[ev].stats;
					}).map(function (c) {
						var t = c.events[ev].stats;

						return {label: csname(c), v: t.total,
							tip: t.calls + ' calls, mean ' + human(t.mean)};
					}).sort(function (a, b) {
						return b.v - a.v;
					});

					add(d, hbars(bars.slice(0, MAX_BARS), 'cs-callsites', 'total ' + evname(ev) +
						' per call site' + (bars.length > MAX_BARS ? ' (the ' + MAX_BARS +
						' largest of ' + bars.length + ')' : ''), 'sbar'));
				}
			}
			if (!any)
				return;
			add(sec, el('h3', {class: 'mono'}, fname(f)));
			sec.appendChild(box);
		});
	}

	/* Keyed targets: the mean per size class of the argument. */
	function classes() {
		var groups = {}, order = [], sec;

		data.functions.forEach(function (f) {
			/* The function without its class: name, or
			 * name@module+0xOFF when two functions share it. */
			var k = fname(f).replace(/\[[^\]]*\]$/, '') + ':arg' + f.argn;

			if (f.key === null)
				return;
			if (!groups[k]) {
				groups[k] = [];
				order.push(k);
			}
			groups[k].push(f);
		});
		if (!order.length)
			return;
		sec = add(root, el('section', {id: 'cs-classes'}));
		add(sec, el('h2', {}, 'By argument size class'));
		order.forEach(function (k) {
			var fs = groups[k].slice().sort(function (a, b) {
				return a.key - b.key;
			}), box, ev;

			add(sec, el('h3', {class: 'mono'}, k));
			box = add(sec, el('div', {class: 'charts'}));
			for (ev = 0; ev < data.events.length; ev++) {
				var items = fs.filter(function (f) {
					return f.events[ev].stats;
				}).map(function (f) {
					var s = f.events[ev].stats;

					return {label: f.key_class, v: s.mean,
						tip: s.calls + ' calls, p50 ' + s.p50 + ', p99 ' + s.p99};
				});

				if (items.length)
					add(add(box, el('div', {class: 'chart'})),
						hbars(items, 'cs-class', 'mean ' + evname(ev) + ' per call, by size class', 'cbar'));
			}
		});
	}

	/* Series over time: mean, p50 and p99 per window against the call
	 * number. */
	function lineChart(l) {
		var W = 560, H = 220, L = 56, B = 40, w = W - L - 14, h = H - B - 14;
		var s = sv('svg', {class: 'cs-series', width: W, height: H, role: 'img'});
		var xs = l.windows, x0 = xs[0].first_call, x1 = xs[xs.length - 1].last_call, max = 0, top;

		xs.forEach(function (p) {
			max = Math.max(max, p.p99, p.mean, p.p50);
		});
		top = yaxis(s, L, H - B, h, w, max);
		if (x1 <= x0)
			x1 = x0 + 1;
		function X(p) {
			return L + ((p.first_call + p.last_call) / 2 - x0) / (x1 - x0) * w;
		}
		/* The mean under the dashed percentiles: equal values stay visible. */
		[['mean', 'l-mean'], ['p50', 'l-p50'], ['p99', 'l-p99']].forEach(function (m) {
			var pts = xs.map(function (p) {
				return X(p).toFixed(1) + ',' + (H - B - p[m[0]] / top * h).toFixed(1);
			});

			if (pts.length === 1)
				pts.push((L + w).toFixed(1) + ',' + pts[0].split(',')[1]);
			add(s, sv('polyline', {class: m[1], points: pts.join(' ')}));
		});
		[x0, (x0 + x1) / 2, x1].forEach(function (v, i) {
			add(s, sv('text', {x: L + i * w / 2, y: H - B + 14,
				'text-anchor': ['start', 'middle', 'end'][i]}, human(Math.round(v))));
		});
		add(s, sv('text', {x: L + w / 2, y: H - 6, 'text-anchor': 'middle'}, 'call number'));
		return s;
	}

	function series() {
		var sec;

		if (!data.series.length)
			return;
		sec = add(root, el('section', {id: 'cs-series'}));
		add(sec, el('h2', {}, 'Over time'));
		data.series.forEach(function (l) {
			var d, lg;

			if (!l.windows.length)
				return;
			d = add(sec, el('div', {class: 'chart'}));
			add(d, el('h4', {class: 'mono'}, (l.target_demangled || l.target) + ', ' +
				evname(l.event) + ' (' +
				(l.tid === null ? 'all threads' : 'thread ' + l.tid) + ', ' +
				(l.shift ? Math.pow(2, l.shift) + ' calls' : '1 call') + ' per window)'));
			add(d, lineChart(l));
			lg = add(d, el('div', {class: 'legend'}));
			[['mean', 'l-mean'], ['p50', 'l-p50'], ['p99', 'l-p99']].forEach(function (m) {
				var sp = add(lg, el('span')), k = add(sp, sv('svg', {width: 22, height: 8}));

				add(k, sv('line', {class: m[1], x1: 0, x2: 22, y1: 4, y2: 4}));
				sp.appendChild(document.createTextNode(m[0]));
			});
		});
	}

	function nav() {
		var n = add(root, el('nav'));

		[['cs-tables', 'Tables'], ['cs-functions', 'Functions'], ['cs-classes', 'Size classes'],
			['cs-series', 'Over time']].forEach(function (x) {
			if (document.getElementById(x[0]))
				add(n, el('a', {href: '#' + x[0]}, x[1]));
		});
		root.insertBefore(n, document.getElementById('cs-summary').nextSibling);
	}

	try {
		data = JSON.parse(document.getElementById('cs-data').textContent);
		root = document.getElementById('cs-report');
		summary();
		tables();
		functions();
		classes();
		series();
		nav();
		document.body.setAttribute('data-rendered', 'ok');
	} catch (err) {
		document.body.setAttribute('data-rendered', 'error');
		document.body.appendChild(el('pre', {class: 'warn', id: 'cs-error'},
			'cannot draw the report: ' + err));
	}
})();
