// Reads one safetensors file with SafeTensors::deserialize and prints what the
// crate sees: "ok" and one line per tensor, sorted by name,
//   tensor <name as JSON> <dtype> [<shape>] <FNV-1a 64 of the bytes, hex> <byte count>
// or "error <message>" (exit 0 both ways; exit 2 when the file cannot be read).
// A panic inside the crate is printed as "error panic".
use safetensors::SafeTensors;

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf29ce484222325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x100000001b3);
    }
    h
}

fn json_string(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

fn main() {
    let path = std::env::args().nth(1).expect("usage: safetensors-read FILE");
    let buffer = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("{path}: {e}");
            std::process::exit(2);
        }
    };
    std::panic::set_hook(Box::new(|_| {}));
    let result = std::panic::catch_unwind(|| match SafeTensors::deserialize(&buffer) {
        Ok(st) => {
            let mut lines: Vec<String> = st
                .tensors()
                .iter()
                .map(|(name, view)| {
                    let shape: Vec<String> = view.shape().iter().map(|d| d.to_string()).collect();
                    format!(
                        "tensor {} {} [{}] {:016x} {}",
                        json_string(name),
                        view.dtype(),
                        shape.join(","),
                        fnv1a(view.data()),
                        view.data().len()
                    )
                })
                .collect();
            lines.sort();
            format!("ok\n{}", lines.iter().map(|l| format!("{l}\n")).collect::<String>())
        }
        Err(e) => format!("error {e}\n"),
    });
    match result {
        Ok(text) => print!("{text}"),
        Err(_) => println!("error panic"),
    }
}
