;;; eglot_ghost.el --- eglot ghost text test for lsp-coder -*- lexical-binding: t -*-

;; Run with
;;   LSP_CODER_TEST_PARAMS=params.json emacs --batch -l eglot_ghost.el
;;
;; params.json: {cmd, init_options, user_config, beside, rass, files: {add, subtract, greet,
;;               read_file}, load_timeout_s, ghost_timeout_s, out}
;; Loads `user_config' (editors/emacs/lsp-coder.el) and, with `beside' and `rass', makes
;; eglot run that server and lsp-coder together through rass with
;; `lsp-coder-eglot-beside'.  A user's own TAB (python-mode-map) inserts "[user-tab]".
;; Types with `execute-kbd-macro', so each key runs through the command loop (its keymaps and
;; post-command-hook) as a user's would, and waits for the ghost text (the overlay's
;; after-string) between keys, running timers and reading the server meanwhile.  Writes
;; what each step showed and left in the buffer as JSON to `out' ({error, messages} on a
;; failure).

;;; Code:

(load (expand-file-name "load_eglot.el" (file-name-directory load-file-name)) nil t)
(load (expand-file-name "test_io.el" (file-name-directory load-file-name)) nil t)
(require 'seq)
(require 'python)

(defun lsp-coder-test--user-tab ()
  "The user's own TAB in python-mode."
  (interactive)
  (insert "[user-tab]"))

(defun lsp-coder-test--wait (what predicate &optional timeout)
  "The first non-nil value of PREDICATE, waiting for it; error naming WHAT after TIMEOUT
seconds (default: the ghost text's)."
  (let ((deadline (+ (float-time) (or timeout (lsp-coder-test--param :ghost_timeout_s))))
        value)
    (while (not (setq value (funcall predicate)))
      (when (> (float-time) deadline)
        (error "Timed out waiting for %s in %s: %S" what (buffer-name) (buffer-string)))
      (accept-process-output nil 0.05))
    value))

(defun lsp-coder-test--overlays ()
  "The ghost text overlays of the current buffer."
  (seq-filter (lambda (o) (overlay-get o 'lsp-coder-ghost))
              (overlays-in (point-min) (point-max))))

(defun lsp-coder-test--ghost ()
  "The ghost text shown at point (its overlay's after-string), or nil."
  (let ((overlays (lsp-coder-test--overlays)))
    (when (and overlays (= (overlay-start (car overlays)) (point)))
      (substring-no-properties (overlay-get (car overlays) 'after-string)))))

(defun lsp-coder-test--keys (keys)
  "Type KEYS (`kbd' notation) through the command loop."
  (execute-kbd-macro (kbd keys)))

(defun lsp-coder-test--asked ()
  "Type SPC DEL (an edit that leaves the text as it was) and wait for the ghost text."
  (lsp-coder-test--keys "SPC DEL")
  (lsp-coder-test--wait "the ghost text" #'lsp-coder-test--ghost))

(defun lsp-coder-test--totals (server)
  "lsp-coder's lspCoder.stats totals, asked through SERVER."
  (plist-get (jsonrpc-request server :workspace/executeCommand
                              '(:command "lspCoder.stats" :arguments []))
             :totals))

(defun lsp-coder-test--open (file)
  "Visit FILE in python-mode with point at its end."
  (find-file file)
  (python-mode)
  (goto-char (point-max)))

(defun lsp-coder-test--completion-items (server)
  "The items of a textDocument/completion at the end of the current buffer, asked until
the other server's come (its first answer can take a while)."
  (lsp-coder-test--wait
   "the other server's completion items"
   (lambda ()
     (let* ((result (jsonrpc-request
                     server :textDocument/completion
                     (append (eglot--TextDocumentPositionParams)
                             '(:context (:triggerKind 1)))))
            (items (if (vectorp result) result (plist-get result :items))))
       (if (seq-empty-p items)
           (progn (accept-process-output nil 1) nil)
         (mapcar (lambda (item) (list :label (plist-get item :label)
                                      :detail (or (plist-get item :detail) "")))
                 items))))
   (lsp-coder-test--param :load_timeout_s)))

(defun lsp-coder-test--run ()
  "Connect, wait for the model, type; return the result plist."
  (setq lsp-coder-command (lsp-coder-test--param :cmd)
        lsp-coder-initialization-options (lsp-coder-test--param :init_options)
        lsp-coder-modes nil)
  (load (lsp-coder-test--param :user_config) nil t)
  (setq lsp-coder-rass-program (lsp-coder-test--param :rass))
  (lsp-coder-eglot-beside 'python-mode (lsp-coder-test--param :beside))
  (define-key python-mode-map (kbd "TAB") #'lsp-coder-test--user-tab)
  (global-set-key (kbd "<f5>") (lambda () (interactive) (switch-to-buffer "add.py")))
  (setq eglot-sync-connect t
        eglot-connect-timeout (lsp-coder-test--param :load_timeout_s))
  (let* ((files (lsp-coder-test--param :files))
         result server)
    (lsp-coder-test--open (plist-get files :add))
    (apply #'eglot (eglot--guess-contact))
    (setq server (or (eglot-current-server) (error "eglot did not connect")))
    (lsp-coder-test--wait "the model"
                          (lambda ()
                            (let ((totals (lsp-coder-test--totals server)))
                              (when (plist-get totals :error)
                                (error "The model failed to load: %s" (plist-get totals :error)))
                              (eq (plist-get totals :model_loaded) t)))
                          (lsp-coder-test--param :load_timeout_s))
    (setq result (list :ghost_mode lsp-coder-ghost-mode
                       :inline_provider (and (plist-member (eglot--capabilities server)
                                                           :inlineCompletionProvider)
                                             t)))
    ;; The suggestion shows at point, in its face; typing along keeps the rest; a character
    ;; it does not have takes it away at once.
    (let* ((ghost (lsp-coder-test--asked))
           (overlay (car (lsp-coder-test--overlays)))
           (first (aref ghost 0))
           (other (if (eq (and (> (length ghost) 1) (aref ghost 1)) ?Z) ?Q ?Z)))
      (setq result (append result
                           (list :ghost ghost
                                 :face (symbol-name (get-text-property
                                                     0 'face (overlay-get overlay 'after-string)))
                                 :cursor_before (eq (get-text-property
                                                     0 'cursor (overlay-get overlay 'after-string))
                                                    t))))
      (execute-kbd-macro (vector first))
      (setq result (append result (list :typed_along (lsp-coder-test--ghost))))
      (execute-kbd-macro (vector other))
      (setq result (append result (list :typed_other (lsp-coder-test--ghost)
                                        :overlays_after_other
                                        (length (lsp-coder-test--overlays))))))
    (lsp-coder-test--keys "DEL DEL")
    (lsp-coder-test--wait "the ghost text again" #'lsp-coder-test--ghost)
    ;; C-g dismisses it; TAB is then the user's again.
    (lsp-coder-test--keys "C-g")
    (setq result (append result (list :after_dismiss (lsp-coder-test--ghost))))
    (lsp-coder-test--keys "TAB")
    (setq result (append result (list :user_tab (buffer-string))))
    (lsp-coder-test--keys "C-/")
    ;; TAB accepts the whole suggestion; the server counts it.
    (let ((accepted (plist-get (lsp-coder-test--totals server) :accepted))
          (ghost (lsp-coder-test--wait "the ghost text after the undo"
                                       #'lsp-coder-test--ghost)))
      (setq result (append result (list :before_tab (buffer-string) :tab_ghost ghost)))
      (lsp-coder-test--keys "TAB")
      (setq result (append result (list :after_tab (buffer-string))))
      (setq result (append result (list :accepted
                                        (- (lsp-coder-test--wait
                                            "lspCoder.accepted"
                                            (lambda ()
                                              (let ((now (plist-get (lsp-coder-test--totals
                                                                     server)
                                                                    :accepted)))
                                                (and (> now accepted) now))))
                                           accepted)))))
    ;; Another buffer takes it away.
    (lsp-coder-test--open (plist-get files :subtract))
    (lsp-coder-test--asked)
    (let ((subtract (current-buffer)))
      (lsp-coder-test--keys "<f5>")
      (setq result (append result (list :switched_to (buffer-name)
                                        :overlays_left (with-current-buffer subtract
                                                         (length (lsp-coder-test--overlays))))))
      (switch-to-buffer subtract))
    ;; M-f takes its next word (what is left stays shown), C-e the rest of its line.
    (let ((ghost (lsp-coder-test--asked)))
      (setq result (append result (list :part_ghost ghost :part_before (buffer-string))))
      (lsp-coder-test--keys "M-f")
      (setq result (append result (list :after_word (buffer-string)
                                        :rest_after_word (lsp-coder-test--ghost))))
      (lsp-coder-test--keys "C-e")
      (setq result (append result (list :after_line (buffer-string)))))
    ;; M-n shows another suggestion (asked for now), M-p the first again.
    (lsp-coder-test--open (plist-get files :greet))
    (let* ((ghost (lsp-coder-test--asked))
           (second (progn (lsp-coder-test--keys "M-n")
                          (lsp-coder-test--wait "another suggestion"
                                                (lambda ()
                                                  (let ((now (lsp-coder-test--ghost)))
                                                    (and now (not (equal now ghost)) now)))))))
      (lsp-coder-test--keys "M-p")
      (setq result (append result (list :cycle_first ghost :cycle_second second
                                        :cycle_back (lsp-coder-test--ghost)))))
    ;; Completion lists hold the other server's items, not lsp-coder's suggestion.
    (lsp-coder-test--open (plist-get files :read_file))
    (setq result (append result (list :completion (vconcat (lsp-coder-test--completion-items
                                                           server)))))
    (ignore-errors (eglot-shutdown server))
    result))

(lsp-coder-test--main #'lsp-coder-test--run)

;;; eglot_ghost.el ends here
