import { mount } from "svelte";
import App from "./App.svelte";
import "./app.css";
import { installDrain } from "./lib/channels";
import { ipc } from "./lib/ipc";

// Channel messages come in batches the window asks for (lib/channels.ts).
installDrain(() => ipc.drainChannels());

const target = document.getElementById("app");
if (!target) throw new Error("index.html lacks #app");
export default mount(App, { target });
