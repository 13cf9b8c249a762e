// Which entries of the file tree are ignored, as editors show them (Zed,
// VS Code): what the project's root `.gitignore` ignores, and the folders
// tools make for themselves (virtual environments, caches, dependencies),
// which are ignored in nearly every project whether or not it says so.
// The tree dims them and keeps them collapsed until opened.
import ignore from "ignore";

/** Folders tools make, ignored even without a `.gitignore` saying so. */
export const TOOL_FOLDERS = [".venv", "venv", "__pycache__", ".pytest_cache", ".mypy_cache", ".ruff_cache", ".tox", "node_modules", "target", ".gradle", ".next"];

/** Whether a path (relative to the root) is ignored; `dir` for a folder. */
export type IgnoreRule = (path: string, dir: boolean) => boolean;

/** The rule of the built-in folders and the root `.gitignore` text (null: none). */
export function ignoreRule(gitignore: string | null): IgnoreRule {
  const rules = ignore().add(TOOL_FOLDERS.map((folder) => `${folder}/`));
  if (gitignore !== null) rules.add(gitignore);
  return (path, dir) => {
    const clean = path.replace(/^\.\//, "");
    if (clean === "" || clean === ".") return false;
    try {
      return rules.ignores(dir ? `${clean}/` : clean);
    } catch {
      // A path the library calls invalid (absolute, `..`): not one of the tree's.
      return false;
    }
  };
}
