// Rebuild when a migration is added or edited: they are embedded in the binary.
fn main() {
    println!("cargo:rerun-if-changed=../../migrations");
}
