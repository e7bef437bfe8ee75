//! Plain text tables with aligned columns.

/// A table: a header row and data rows; numeric-looking cells are right-aligned.
#[derive(Clone, Debug, Default)]
pub struct Table {
    /// Column titles.
    pub header: Vec<String>,
    /// Rows.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// A table with these column titles.
    pub fn new(header: &[&str]) -> Table {
        Table { header: header.iter().map(|s| s.to_string()).collect(), rows: Vec::new() }
    }

    /// Appends a row.
    pub fn row(&mut self, cells: Vec<String>) {
        self.rows.push(cells);
    }

    /// Renders with two spaces between columns.
    pub fn render(&self) -> String {
        let n = self.header.len();
        let mut w = vec![0usize; n];
        for r in std::iter::once(&self.header).chain(&self.rows) {
            for (i, c) in r.iter().enumerate().take(n) {
                w[i] = w[i].max(c.chars().count());
            }
        }
        let mut out = String::new();
        for (k, r) in std::iter::once(&self.header).chain(&self.rows).enumerate() {
            let mut line = String::new();
            for (i, c) in r.iter().enumerate().take(n) {
                if i > 0 {
                    line.push_str("  ");
                }
                let pad = w[i] - c.chars().count();
                if k > 0 && numeric(c) {
                    line.push_str(&" ".repeat(pad));
                    line.push_str(c);
                } else {
                    line.push_str(c);
                    line.push_str(&" ".repeat(pad));
                }
            }
            out.push_str(line.trim_end());
            out.push('\n');
            if k == 0 {
                out.push_str(&w.iter().map(|x| "-".repeat(*x)).collect::<Vec<_>>().join("  "));
                out.push('\n');
            }
        }
        out
    }

    /// The table without the columns titled `names` (what a page states once for the whole table).
    pub fn without(&self, names: &[&str]) -> Table {
        let keep: Vec<bool> = self.header.iter().map(|h| !names.contains(&h.as_str())).collect();
        let pick = |r: &Vec<String>| r.iter().zip(&keep).filter(|(_, k)| **k).map(|(c, _)| c.clone()).collect();
        Table { header: pick(&self.header), rows: self.rows.iter().map(pick).collect() }
    }

    /// Renders as an HTML `<table>` (text escaped; numeric-looking cells right-aligned, others left).
    pub fn render_html(&self) -> String {
        use std::fmt::Write;
        let esc = crate::html::esc;
        let mut out = String::from("<table><tr>");
        for h in &self.header {
            let _ = write!(out, "<th>{}</th>", esc(h));
        }
        out.push_str("</tr>");
        for r in &self.rows {
            out.push_str("<tr>");
            for c in r {
                let class = if numeric(c) { "" } else { " class=\"t\"" };
                let _ = write!(out, "<td{class}>{}</td>", esc(c));
            }
            out.push_str("</tr>");
        }
        out.push_str("</table>");
        out
    }

    /// Renders as CSV.
    pub fn render_csv(&self) -> String {
        let esc = |s: &str| {
            if s.contains([',', '"', '\n']) {
                format!("\"{}\"", s.replace('"', "\"\""))
            } else {
                s.to_string()
            }
        };
        let mut out = String::new();
        for r in std::iter::once(&self.header).chain(&self.rows) {
            out.push_str(&r.iter().map(|c| esc(c)).collect::<Vec<_>>().join(","));
            out.push('\n');
        }
        out
    }
}

/// Whether a cell looks like a number (a count, a percentage, `-`), which tables right-align.
fn numeric(s: &str) -> bool {
    !s.is_empty() && s.chars().all(|c| c.is_ascii_digit() || ".%-x+*M".contains(c))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligns_columns() {
        let mut t = Table::new(&["kernel", "n"]);
        t.row(vec!["a".into(), "10".into()]);
        t.row(vec!["bbb".into(), "2".into()]);
        assert_eq!(t.render(), "kernel  n\n------  --\na       10\nbbb      2\n");
        assert_eq!(t.render_csv(), "kernel,n\na,10\nbbb,2\n");
        let h = t.without(&["kernel"]).render_html();
        assert_eq!(h, "<table><tr><th>n</th></tr><tr><td>10</td></tr><tr><td>2</td></tr></table>");
        t.row(vec!["<a>".into(), "x y".into()]);
        assert!(t.render_html().contains("<td class=\"t\">&lt;a&gt;</td><td class=\"t\">x y</td>"));
    }
}
