// Svelte 5 understands TypeScript annotations in <script lang="ts"> natively,
// so no preprocessor is needed.
export default {
  compilerOptions: { runes: true },
};
