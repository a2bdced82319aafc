//! The README's shell blocks, and the guides' in `docs/`, read from the pages and run as a user
//! runs them: in a shell at the repository's root, where `localstack/.run/env` is the env file of
//! the stack they run on.
//!
//! Every fenced block says what it is in its info string. ```` ```sh NAME ```` is a shell block
//! the suite runs (tests/tests/e2e/readme.rs runs them in order and checks what the page promises
//! next to each; the ones that need LocalStack run in tests/tests/e2e/gateway.rs); ```` ```sh on-aws ````
//! is for a deployment on AWS and is not run (no AWS here); any other language (yaml, text) is
//! not shell. A block with no info string is refused, so no shell block escapes the test.

use crate::Stack;
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The pages whose shell blocks the suite runs, in the order it runs them: the README, then the
/// guides it links to. A page of `docs/` with a `sh` block must be one of them.
pub const PAGES: &[&str] = &[
    "README.md",
    "docs/actions.md",
    "docs/keeping-vms-alive.md",
    "docs/across-clouds.md",
    "docs/spot.md",
    "docs/target-tracking.md",
    "docs/load-balancers.md",
    "docs/notifications.md",
    "docs/request-limits.md",
    "docs/metrics.md",
    "docs/console.md",
    "docs/own-api.md",
    "docs/phantomctl.md",
    "docs/deploy.md",
    "docs/local-stack.md",
    "docs/development.md",
];

/// A shell block of a page.
#[derive(Debug, Clone)]
pub struct Block {
    pub name: String,
    /// The page it is on and the line of its opening fence, for messages (`docs/x.md:12`).
    pub at: String,
    pub code: String,
}

/// The info string that marks a block for a deployment on AWS, which the suite cannot run.
pub const ON_AWS: &str = "on-aws";

/// The pages' `sh` blocks in the pages' order (`on-aws` ones included), or panics naming a
/// block the test could not classify.
pub fn blocks() -> Vec<Block> {
    PAGES
        .iter()
        .flat_map(|page| {
            let text = std::fs::read_to_string(crate::root().join(page))
                .unwrap_or_else(|e| panic!("{page}: {e}"));
            parse(page, &text)
        })
        .collect()
}

fn parse(page: &str, text: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<(Block, String)> = None; // the block and its fence's indentation
    for (i, line) in text.lines().enumerate() {
        let trimmed = line.trim_start();
        let indent = &line[..line.len() - trimmed.len()];
        let at = format!("{page}:{}", i + 1);
        match open.take() {
            Some((block, _)) if trimmed.starts_with("```") => blocks.push(block),
            Some((mut block, fence_indent)) => {
                // A block inside a list item is indented with its fence: the code is not.
                block
                    .code
                    .push_str(line.strip_prefix(fence_indent.as_str()).unwrap_or(line));
                block.code.push('\n');
                open = Some((block, fence_indent));
            }
            None => {
                let Some(info) = trimmed.strip_prefix("```") else {
                    continue;
                };
                let mut words = info.split_whitespace();
                let lang = words.next();
                assert!(
                    lang.is_some(),
                    "{at}: a fenced block without a language: say `sh NAME` (run by the tests), \
                     `sh {ON_AWS}`, or its language (yaml, text)"
                );
                let name = if lang == Some("sh") {
                    words.next().unwrap_or_else(|| {
                        panic!(
                            "{at}: a sh block needs a name (`sh NAME`, checked by \
                             tests/tests/e2e/readme.rs) or `sh {ON_AWS}`"
                        )
                    })
                } else {
                    "" // not shell: read to its closing fence and dropped
                };
                open = Some((
                    Block {
                        name: name.to_string(),
                        at,
                        code: String::new(),
                    },
                    indent.to_string(),
                ));
            }
        }
    }
    assert!(open.is_none(), "{page}: a fenced block is never closed");
    blocks.retain(|b| !b.name.is_empty());
    blocks
}

/// The block called `name`; there must be exactly one.
pub fn block(name: &str) -> Block {
    let mut found = blocks().into_iter().filter(|b| b.name == name);
    let block = found
        .next()
        .unwrap_or_else(|| panic!("no page has a block `sh {name}`"));
    assert!(found.next().is_none(), "two blocks are called `sh {name}`");
    block
}

/// What a block printed.
#[derive(Debug)]
pub struct Ran {
    pub stdout: String,
    pub stderr: String,
}

/// A user's terminal at the repository's root, against one stack: each block runs in bash with
/// `set -e` (every command must succeed), `localstack/.run/env` is the stack's env file, and once a
/// block has sourced it, later blocks have it too, as in the terminal the user keeps open. Nothing
/// of the test's own AWS or Phantom environment reaches the blocks.
pub struct Shell {
    home: PathBuf,
    sourced: bool,
}

const SOURCE_ENV: &str = "source localstack/.run/env";

impl Stack {
    pub fn shell(&self) -> Shell {
        static SHELLS: AtomicUsize = AtomicUsize::new(0);
        let home = std::env::temp_dir().join(format!(
            "phantom-readme-{}-{}",
            std::process::id(),
            SHELLS.fetch_add(1, Ordering::SeqCst)
        ));
        let run = home.join("localstack/.run");
        std::fs::create_dir_all(&run).expect("a folder for the env file");
        std::fs::copy(self.run_dir.join("env"), run.join("env")).expect("the stack's env file");
        Shell {
            home,
            sourced: false,
        }
    }
}

impl Shell {
    /// Runs `block`; panics with the block and its output when a command in it fails.
    pub fn run(&mut self, block: &Block) -> Ran {
        let code = if self.sourced {
            format!("{SOURCE_ENV}\n{}", block.code)
        } else {
            block.code.clone()
        };
        let mut cmd = Command::new("bash");
        cmd.args(["-e", "-o", "pipefail", "-c", &code])
            .current_dir(&self.home)
            .env("AWS_CONFIG_FILE", "/nonexistent")
            .env("AWS_SHARED_CREDENTIALS_FILE", "/nonexistent")
            .env("AWS_PAGER", "");
        for (key, _) in std::env::vars() {
            if key.starts_with("AWS_") || key.starts_with("PHANTOM_") {
                cmd.env_remove(key);
            }
        }
        let out = cmd.output().expect("bash runs");
        let ran = Ran {
            stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        };
        assert!(
            out.status.success(),
            "{} (`sh {}`) failed ({}):\n{}\n--- stdout\n{}--- stderr\n{}",
            block.at,
            block.name,
            out.status,
            block.code,
            ran.stdout,
            ran.stderr
        );
        self.sourced |= block.code.lines().any(|l| l.trim() == SOURCE_ENV);
        ran
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_keep_their_names_order_and_code_without_the_list_indent() {
        let text = "intro\n```sh first\necho one\n```\n\n```yaml\na: b\n```\n1. step\n   ```sh on-aws\n   deploy it\n   ```\n```sh second\necho two\n```\n";
        let got: Vec<(String, String)> = parse("README.md", text)
            .into_iter()
            .map(|b| (b.name, b.code))
            .collect();
        assert_eq!(
            got,
            [
                ("first".into(), "echo one\n".into()),
                ("on-aws".into(), "deploy it\n".into()),
                ("second".into(), "echo two\n".into())
            ]
        );
    }

    #[test]
    #[should_panic(expected = "docs/x.md:2: a sh block needs a name")]
    fn a_sh_block_without_a_name_is_refused() {
        parse("docs/x.md", "x\n```sh\necho\n```\n");
    }

    #[test]
    #[should_panic(expected = "README.md:1: a fenced block without a language")]
    fn a_block_without_a_language_is_refused() {
        parse("README.md", "```\necho\n```\n");
    }
}
