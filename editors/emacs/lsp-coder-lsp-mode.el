;;; lsp-coder-lsp-mode.el --- lsp-coder as an lsp-mode add-on client -*- lexical-binding: t -*-

;; Version: 0.1.0
;; Package-Requires: ((emacs "28.1") (lsp-mode "8.0"))
;; Keywords: languages, tools, completion

;;; Commentary:

;; Registers lsp-coder with lsp-mode as an add-on client (`:add-on? t'): lsp-mode starts it
;; next to the language server it picks for the buffer (pyright, rust-analyzer, gopls,
;; ...).  Its suggestions show as ghost text (`lsp-coder-ghost-mode', asked through lsp-mode's
;; connection to lsp-coder); with `lsp-coder-ghost-text' nil when this file loads they come
;; through `completion-at-point' (company, corfu) among the other server's items instead.
;;
;;   (add-to-list 'load-path "/path/to/lsp-coder/editors/emacs")
;;   (require 'lsp-coder-lsp-mode)
;;
;; The settings are lsp-coder.el's: `lsp-coder-command', `lsp-coder-initialization-options'
;; and `lsp-coder-modes' (the modes where lsp-mode adds it).

;;; Code:

(require 'seq)
(require 'lsp-mode)
(require 'lsp-coder                     ; and lsp-coder-ghost, which it loads
         (expand-file-name "lsp-coder"
                           (file-name-directory
                            (or load-file-name buffer-file-name
                                (bound-and-true-p byte-compile-current-file)))))

(defconst lsp-coder--lsp-mode-ghost-text lsp-coder-ghost-text
  "Whether the client registered below tells lsp-coder it shows ghost text.")

(defun lsp-coder--lsp-mode-workspace ()
  "The buffer's lsp-mode workspace of lsp-coder, or nil."
  (seq-find (lambda (workspace)
              (eq (lsp--client-server-id (lsp--workspace-client workspace)) 'lsp-coder))
            (lsp-workspaces)))

(defun lsp-coder--lsp-mode-request (invoked callback)
  "Send textDocument/inlineCompletion at point to lsp-coder alone; CALLBACK gets the result.
INVOKED: the user asked."
  (when-let ((workspace (lsp-coder--lsp-mode-workspace)))
    (with-lsp-workspace workspace
      (lsp-request-async "textDocument/inlineCompletion"
                         (append (lsp--text-document-position-params)
                                 (list :context (list :triggerKind (if invoked 1 2))))
                         callback :error-handler #'ignore :mode 'detached))))

(defun lsp-coder--lsp-mode-execute (command)
  "Run the LSP COMMAND on lsp-coder."
  (when-let ((workspace (lsp-coder--lsp-mode-workspace)))
    (with-lsp-workspace workspace
      (lsp-request-async "workspace/executeCommand"
                         (list :command (lsp-coder-ghost--field command :command)
                               :arguments (or (lsp-coder-ghost--field command :arguments) []))
                         #'ignore :error-handler #'ignore :mode 'detached))))

(defun lsp-coder--lsp-mode-ghost ()
  "Turn `lsp-coder-ghost-mode' on when lsp-coder opens the buffer (`lsp-after-open-hook')."
  (when (and lsp-coder--lsp-mode-ghost-text (lsp-coder--lsp-mode-workspace))
    (setq lsp-coder-ghost-backend (list :request #'lsp-coder--lsp-mode-request
                                        :execute #'lsp-coder--lsp-mode-execute
                                        :to-point #'lsp--position-to-point))
    (lsp-coder-ghost-mode 1)))

(defun lsp-coder--lsp-mode-ghost-off ()
  "Turn `lsp-coder-ghost-mode' off when lsp-mode leaves the buffer."
  (unless lsp-managed-mode
    (lsp-coder-ghost-mode -1)))

(add-hook 'lsp-after-open-hook #'lsp-coder--lsp-mode-ghost)
(add-hook 'lsp-managed-mode-hook #'lsp-coder--lsp-mode-ghost-off)

(lsp-register-client
 (make-lsp-client
  :new-connection (lsp-stdio-connection (lambda () lsp-coder-command))
  :activation-fn (lambda (_file-name major-mode) (memq major-mode lsp-coder-modes))
  :server-id 'lsp-coder
  :add-on? t
  :priority -1
  :custom-capabilities (when lsp-coder--lsp-mode-ghost-text
                         '((experimental . ((lspCoderGhostText . t)))))
  :initialization-options (lambda () lsp-coder-initialization-options)))

(provide 'lsp-coder-lsp-mode)
;;; lsp-coder-lsp-mode.el ends here
