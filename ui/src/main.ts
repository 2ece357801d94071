import "@fontsource-variable/inter";
import "./app.css";

import { mount } from "svelte";

import App from "./App.svelte";
import { commands } from "./ipc";

const target = document.getElementById("app");
if (!target) throw new Error("index.html has no #app element");

const app = mount(App, { target });
// Two frames on: the first one has been painted.
requestAnimationFrame(() => requestAnimationFrame(() => void commands.uiReady().catch(() => {})));

export default app;
