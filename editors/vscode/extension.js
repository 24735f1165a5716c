// rulesvm rules: starts the language server (`rulesvm lsp`, see docs/editors.md) for rules
// files and YAML files: errors as you type, hover, go to definition, references, rename,
// completion, formatting, outline, semantic highlighting, quick fixes. The command is the
// setting `rulesvm.server.command` (default: `rulesvm lsp`).
//
// Without the server (the command not found, or `npm install` not run here) the extension
// says so once and the rest keeps working: highlighting, comments and brackets are declared
// in package.json and need no code.
"use strict";

const fs = require("fs");
const path = require("path");
const vscode = require("vscode");

let client;

// The client library, or undefined when `npm install` has not been run in this folder.
function languageClient() {
  try {
    return require("vscode-languageclient/node").LanguageClient;
  } catch (error) {
    if (error && error.code === "MODULE_NOT_FOUND") {
      return undefined;
    }
    throw error;
  }
}

// Whether `command` names a file that can be run: a path, or a name found on the PATH.
function found(command) {
  const runnable = (file) => {
    try {
      return fs.statSync(file).isFile();
    } catch (error) {
      return false;
    }
  };
  if (command.includes("/") || command.includes("\\")) {
    return runnable(command);
  }
  const suffixes = process.platform === "win32" ? (process.env.PATHEXT || ".EXE;.CMD;.BAT").split(";") : [""];
  return (process.env.PATH || "").split(path.delimiter).some(
    (folder) => folder && suffixes.some((suffix) => runnable(path.join(folder, command + suffix))));
}

function withoutServer(reason) {
  void vscode.window.showWarningMessage(
    `rulesvm: ${reason}; rules files are highlighted, but errors as you type, hover and the rest need the ` +
    "language server (see docs/editors.md)");
}

function activate(context) {
  const command = vscode.workspace.getConfiguration("rulesvm").get("server.command", ["rulesvm", "lsp"]);
  if (!Array.isArray(command) || command.length === 0 || typeof command[0] !== "string") {
    vscode.window.showErrorMessage("rulesvm.server.command must be a list such as [\"rulesvm\", \"lsp\"]");
    return;
  }
  if (!found(command[0])) {
    withoutServer(`the language server \`${command[0]}\` was not found (set \`rulesvm.server.command\`)`);
    return;
  }
  const LanguageClient = languageClient();
  if (LanguageClient === undefined) {
    withoutServer("the extension's dependency is not installed (run `npm install` in its folder)");
    return;
  }
  const server = { command: command[0], args: command.slice(1) };
  const documents = {
    documentSelector: [
      { scheme: "file", language: "rulesvm" },
      { scheme: "file", language: "yaml" },
    ],
  };
  client = new LanguageClient("rulesvm", "rulesvm language server", server, documents);
  context.subscriptions.push(client);
  client.start().catch((error) => {
    client = undefined;
    withoutServer(`the language server \`${command.join(" ")}\` did not start (${error && error.message})`);
  });
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate, found };
