//! Zed extension: starts `mercury-lsp serve` for the languages in extension.toml.
//!
//! The binary is `lsp.mercury-lsp.binary.path` from the user's settings when set, else
//! `mercury-lsp` found on the worktree's PATH; `initialization_options` and `settings` from
//! `lsp.mercury-lsp` are passed through unchanged (the server validates them).

use zed_extension_api::{self as zed, serde_json, settings::LspSettings, LanguageServerId, Result};

/// The language server's id in extension.toml and in the user's `lsp` settings.
const SERVER_ID: &str = "mercury-lsp";
/// The executable looked up on PATH when no `binary.path` is configured.
const SERVER_BINARY: &str = "mercury-lsp";
/// Its arguments: the language server over stdio.
const SERVER_ARGS: &[&str] = &["serve"];

struct MercuryExtension;

impl zed::Extension for MercuryExtension {
    fn new() -> Self {
        MercuryExtension
    }

    fn language_server_command(
        &mut self,
        language_server_id: &LanguageServerId,
        worktree: &zed::Worktree,
    ) -> Result<zed::Command> {
        let binary = LspSettings::for_worktree(language_server_id.as_ref(), worktree)
            .ok()
            .and_then(|settings| settings.binary);
        let configured = binary.as_ref().and_then(|b| b.path.clone());
        let command = match configured {
            Some(path) => path,
            None => worktree.which(SERVER_BINARY).ok_or_else(|| {
                format!(
                    "{SERVER_BINARY} is not on PATH: install mercury-lsp (./dev setup) and add its \
                     .venv/bin to PATH, or set lsp.{SERVER_ID}.binary.path in settings.json"
                )
            })?,
        };
        let args = binary
            .as_ref()
            .and_then(|b| b.arguments.clone())
            .unwrap_or_else(|| SERVER_ARGS.iter().map(|a| a.to_string()).collect());
        Ok(zed::Command {
            command,
            args,
            env: worktree.shell_env(),
        })
    }

    fn language_server_initialization_options(
        &mut self,
        language_server_id: &LanguageServerId,
        worktree: &zed::Worktree,
    ) -> Result<Option<serde_json::Value>> {
        Ok(
            LspSettings::for_worktree(language_server_id.as_ref(), worktree)
                .ok()
                .and_then(|settings| settings.initialization_options),
        )
    }

    fn language_server_workspace_configuration(
        &mut self,
        language_server_id: &LanguageServerId,
        worktree: &zed::Worktree,
    ) -> Result<Option<serde_json::Value>> {
        let settings = LspSettings::for_worktree(language_server_id.as_ref(), worktree)
            .ok()
            .and_then(|settings| settings.settings);
        Ok(settings.map(|s| serde_json::json!({ "mercury": s })))
    }
}

zed::register_extension!(MercuryExtension);
