// rulesvm rules: starts the language server (`rulesvm lsp`, see docs/editors.md) for rules
// files and YAML files: errors as you type, hover, go to definition, completion, formatting,
// outline. The command is the setting `rulesvm.server.command` (default: `rulesvm lsp`).
"use strict";

const vscode = require("vscode");
const { LanguageClient } = require("vscode-languageclient/node");

let client;

function activate(context) {
  const command = vscode.workspace.getConfiguration("rulesvm").get("server.command", ["rulesvm", "lsp"]);
  if (!Array.isArray(command) || command.length === 0) {
    vscode.window.showErrorMessage("rulesvm.server.command must be a list such as [\"rulesvm\", \"lsp\"]");
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
  client.start();
}

function deactivate() {
  return client ? client.stop() : undefined;
}

module.exports = { activate, deactivate };
