//! Dockerfile text to instructions, and the generated regions in it.

/// One instruction, its continuation lines joined as docker joins them.
#[derive(Debug, Clone)]
pub struct Instruction {
    /// 1-based line of the keyword in the Dockerfile.
    pub line: usize,
    pub keyword: String,
    pub args: String,
}

impl Instruction {
    pub fn text(&self) -> String {
        format!("{} {}", self.keyword, self.args)
    }
}

/// Parses Dockerfile text whose first line is line `first_line` of the file.
pub fn parse(text: &str, first_line: usize) -> Result<Vec<Instruction>, String> {
    let mut out = Vec::new();
    let mut pending: Option<(usize, String)> = None;
    for (i, raw) in text.lines().enumerate() {
        let line_no = first_line + i;
        let trimmed = raw.trim_start();
        // Comments end nothing: inside a continuation docker drops them, as it does blank lines.
        if trimmed.starts_with('#') || (trimmed.is_empty() && pending.is_some()) {
            continue;
        }
        let (start, mut acc) = match pending.take() {
            Some(p) => p,
            None if trimmed.is_empty() => continue,
            None => (line_no, String::new()),
        };
        let body = raw.trim_end();
        match body.strip_suffix('\\') {
            Some(head) => {
                acc.push_str(head);
                pending = Some((start, acc));
            }
            None => {
                acc.push_str(body);
                let acc = acc.trim();
                let (keyword, args) = acc.split_once(char::is_whitespace).unwrap_or((acc, ""));
                out.push(Instruction {
                    line: start,
                    keyword: keyword.to_ascii_uppercase(),
                    args: args.trim().to_owned(),
                });
            }
        }
    }
    if let Some((start, _)) = pending {
        return Err(format!(
            "line {start}: the instruction ends in a line continuation"
        ));
    }
    Ok(out)
}

/// The body of the generated region `<name> <region>` and the line number of its first line.
pub fn region(text: &str, name: &str, region: &str) -> Result<(String, usize), String> {
    let begin = format!("# >>> api.toml: {name} {region} ");
    let end = format!("# <<< {name} {region} ");
    let lines: Vec<&str> = text.lines().collect();
    let start = lines.iter().position(|l| l.starts_with(&begin));
    let stop = lines.iter().position(|l| l.starts_with(&end));
    match (start, stop) {
        (Some(s), Some(e)) if s < e => Ok((lines[s + 1..e].join("\n"), s + 2)),
        _ => Err(format!(
            "no region `{name} {region}` (markers `{begin}...` / `{end}...`)"
        )),
    }
}
