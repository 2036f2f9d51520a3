//! Records the git commit the extension is built from, for the provenance of every
//! result (`hetpath._core.build_commit()`): the commit, with `-dirty` if tracked files
//! differ from it; nothing when the source is not a git checkout.

use std::path::Path;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let dir = std::env::var("CARGO_MANIFEST_DIR").ok()?;
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(args)
        .output()
        .ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let commit = git(&["rev-parse", "HEAD"]).unwrap_or_default();
    let dirty =
        git(&["status", "--porcelain", "--untracked-files=no"]).is_some_and(|s| !s.is_empty());
    let suffix = if dirty && !commit.is_empty() {
        "-dirty"
    } else {
        ""
    };
    println!("cargo:rustc-env=HETPATH_GIT_COMMIT={commit}{suffix}");
    // Build again when the checkout moves to another commit or its files change.
    if let Some(git_dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        for f in ["HEAD", "index"] {
            let p = Path::new(&git_dir).join(f);
            if p.exists() {
                println!("cargo:rerun-if-changed={}", p.display());
            }
        }
    }
}
