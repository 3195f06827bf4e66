package dashboard

import "html/template"

var pages = template.Must(template.New("").Funcs(template.FuncMap{
	"pct":   func(f float64) string { return fmtf(f) },
	"count": count,
}).Parse(`{{define "head"}}<!doctype html>
<html lang="en"><head><meta charset="utf-8">{{if gt .Refresh 0}}<meta http-equiv="refresh" content="{{.Refresh}}">{{end}}
<title>{{.Title}}</title>
<style>
body{font-family:sans-serif;margin:16px;color:#222}
table{border-collapse:collapse;font-size:13px}
th,td{border:1px solid #ddd;padding:2px 6px}
th a{color:#222;text-decoration:none}
td.r{text-align:right;font-variant-numeric:tabular-nums}
tr.best{background:#fff6d5}
.bar{display:flex;height:22px;width:760px;border:1px solid #ccc}
.bar div{color:#fff;font-size:12px;line-height:22px;padding-left:4px;overflow:hidden;white-space:nowrap}
.figs{display:flex;flex-wrap:wrap;gap:8px;align-items:flex-start}
pre{background:#f6f6f6;padding:6px;max-width:100ch;overflow:auto;font-size:12px}
.state{display:inline-block;width:10px;height:10px;margin-right:4px}
.pager a,.pager span{margin-right:12px}
</style></head><body>{{end}}

{{define "overview"}}{{template "head" .}}
<h1>{{.Title}}</h1>
<p id="status">{{.Line}} <small>(ledger read at {{.Updated}}; {{if .Finished}}the sweep has finished, so this page no longer refreshes{{else if gt .Refresh 0}}refreshing every {{.Refresh}} s{{else}}not refreshing{{end}})</small></p>
<div class="bar" id="progress">{{range .Counts}}<div style="width:{{pct .Percent}}%;background:{{.Color}}" title="{{.State}}: {{.N}}">{{.State}} {{.N}}</div>{{end}}</div>
<h2>{{.Metric}}</h2>
{{if .Ranked}}<p id="summary">{{count .Ranked}} of {{count .Total}} runs have a {{.Metric}}: best {{.Best}}, median {{.Median}}.</p>{{end}}
<div class="figs">{{.Curves}}{{.Hist}}</div>
{{if .Scatters}}<h2>Hyper-parameters against the final {{.Metric}}</h2>
<div class="figs">{{range .Scatters}}{{.}}{{end}}</div>{{end}}
<h2 id="runs-head">{{if .Matching}}Runs {{.First}}–{{.Last}} of {{count .Matching}}{{if or .State .Query}} matching{{end}}{{else}}No runs{{if or .State .Query}} match{{end}}{{end}}{{if or .State .Query}} ({{count .Total}} in all){{end}}</h2>
<form method="get"><label>state <select name="state"><option value="">all</option>{{$st := .State}}{{range .States}}<option value="{{.}}"{{if eq . $st}} selected{{end}}>{{.}}</option>{{end}}</select></label>
<label>name contains <input name="q" value="{{.Query}}" maxlength="200"></label>
<input type="hidden" name="sort" value="{{.Sort}}">{{if .Desc}}<input type="hidden" name="desc" value="1">{{end}}<button>filter</button></form>
<p class="pager">{{if .PrevURL}}<a href="{{.PrevURL}}">← previous</a>{{end}}<span>page {{.Page}} of {{.Pages}}</span>{{if .NextURL}}<a href="{{.NextURL}}">next →</a>{{end}}</p>
<table id="runs"><thead><tr>{{$p := .}}{{range .Columns}}<th><a href="?sort={{.}}{{if and (eq . $p.Sort) (not $p.Desc)}}&amp;desc=1{{end}}&amp;state={{$p.State}}&amp;q={{$p.Query}}">{{.}}{{if eq . $p.Sort}}{{if $p.Desc}} ▼{{else}} ▲{{end}}{{end}}</a></th>{{end}}</tr></thead>
<tbody>{{range $r := .Rows}}<tr class="run{{if $r.Best}} best{{end}}" data-state="{{$r.State}}">{{range $i, $c := $r.Cells}}{{if eq $i 0}}<td><span class="state" style="background:{{$r.Color}}"></span><a href="run/{{$r.ID}}">{{$c.Text}}</a></td>{{else}}<td{{if $c.Right}} class="r"{{end}}>{{$c.Text}}</td>{{end}}{{end}}</tr>{{end}}</tbody></table>
{{if .NFailed}}<h2 id="failed-head">Failed runs ({{if lt (len .Failures) .NFailed}}the {{len .Failures}} most recent of {{count .NFailed}}; the table lists all with state failed{{else}}{{.NFailed}}{{end}})</h2>
<p>By error class:{{range .Classes}} {{.Class}} {{count .N}};{{end}}</p>
{{range .Failures}}<details open><summary><a href="run/{{.ID}}">{{.Slug}}</a>: {{.Error}}</summary><pre>{{.Log}}</pre></details>{{end}}{{end}}
</body></html>{{end}}

{{define "run"}}{{template "head" .}}
<p><a href="../">← all runs</a></p>
<h1>{{.Slug}}</h1>
<p>state: {{.State}}{{if .Error}}; error: {{.Error}}{{end}}</p>
{{if .Note}}<p class="note">{{.Note}}</p>{{end}}
<table>{{range .Params}}<tr><th>{{index . 0}}</th><td>{{index . 1}}</td></tr>{{end}}</table>
<div class="figs">{{range .Curves}}{{.}}{{end}}</div>
{{if .Attempts}}<h2>Attempts</h2>
<table id="attempts"><thead><tr><th>attempt</th><th>state</th><th>backend id</th><th>started</th><th>took</th><th>error class</th><th>error</th></tr></thead>
<tbody>{{range .Attempts}}<tr>{{range $i, $c := .}}<td{{if eq $i 0}} class="r"{{end}}>{{$c}}</td>{{end}}</tr>{{end}}</tbody></table>{{end}}
{{if .Log}}<h2>Log</h2><pre>{{.Log}}</pre>{{end}}
</body></html>{{end}}`))
