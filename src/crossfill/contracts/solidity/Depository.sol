// SPDX-License-Identifier: UNLICENSED
pragma solidity ^0.8.30;

import {IERC20} from "./lib/IERC20.sol";
import {Owned} from "./lib/Owned.sol";
import {SafeTransfer} from "./lib/SafeTransfer.sol";
import {TypedSignatures} from "./lib/TypedSignatures.sol";

/// @notice EIP-3009's payee-executed transfer (USDC and the devnet's TestUSDC).
interface IReceiveWithAuthorization {
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external;
}

/// @title Depository
/// @notice Holds user deposits tagged with a 32-byte order id, and pays out only what the
/// configured allocator authorises with an EIP-712 signed `CallRequest` (solver repayment,
/// refunds). It has no receive/fallback: ether sent without an id reverts.
contract Depository is Owned {
    struct Call {
        address to;
        bytes data;
        uint256 value;
        bool allowFailure;
    }

    struct CallRequest {
        Call[] calls;
        uint256 nonce;
        uint256 expiration;
    }

    event NativeDeposit(address from, uint256 amount, bytes32 id);
    event Erc20Deposit(address from, address token, uint256 amount, bytes32 id);
    event CallExecuted(bytes32 id, Call call);
    event AllocatorChanged(address allocator);

    error ZeroAmount();
    error CallRequestExpired(uint256 expiration);
    error NonceAlreadyUsed(uint256 nonce);
    error InvalidSignature();
    error CallFailed(uint256 index, bytes returnData);

    bytes32 public constant CALL_TYPEHASH =
        keccak256("Call(address to,bytes data,uint256 value,bool allowFailure)");
    bytes32 public constant CALL_REQUEST_TYPEHASH = keccak256(
        "CallRequest(Call[] calls,uint256 nonce,uint256 expiration)"
        "Call(address to,bytes data,uint256 value,bool allowFailure)"
    );
    bytes32 private constant NAME_HASH = keccak256("CrossfillDepository");
    bytes32 private constant VERSION_HASH = keccak256("1");

    address public allocator;
    /// @notice Nonces of executed call requests: the replay guard. A nonce pays out once,
    /// however many requests the allocator signs with it, so a payout signed again (a later
    /// expiration, another amount) can never execute beside the first.
    mapping(uint256 => bool) public nonceUsed;

    constructor(address initialOwner, address initialAllocator) Owned(initialOwner) {
        allocator = initialAllocator;
        emit AllocatorChanged(initialAllocator);
    }

    function setAllocator(address newAllocator) external onlyOwner {
        allocator = newAllocator;
        emit AllocatorChanged(newAllocator);
    }

    /// @notice Deposits ether for order `id`; `depositor` 0 means the sender.
    function depositNative(address depositor, bytes32 id) external payable {
        if (msg.value == 0) revert ZeroAmount();
        emit NativeDeposit(_depositorOrSender(depositor), msg.value, id);
    }

    /// @notice Pulls `amount` of `token` from the sender for order `id`.
    function depositErc20(address depositor, address token, uint256 amount, bytes32 id) public {
        if (amount == 0) revert ZeroAmount();
        SafeTransfer.safeTransferFrom(token, msg.sender, address(this), amount);
        emit Erc20Deposit(_depositorOrSender(depositor), token, amount, id);
    }

    /// @notice Pulls the sender's whole allowance of `token` for order `id`.
    function depositErc20(address depositor, address token, bytes32 id) external {
        depositErc20(depositor, token, IERC20(token).allowance(msg.sender, address(this)), id);
    }

    /// @notice A gasless deposit for order `id`: the depositor signed an EIP-3009
    /// authorization paying this contract, with `id` as its nonce. The signature binds the
    /// order, so anyone may submit it; the token lets it be used once.
    function depositErc20WithAuthorization(
        address depositor,
        address token,
        uint256 amount,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 id,
        bytes calldata signature
    ) external {
        if (amount == 0) revert ZeroAmount();
        if (signature.length != 65) revert InvalidSignature();
        IReceiveWithAuthorization(token).receiveWithAuthorization(
            depositor,
            address(this),
            amount,
            validAfter,
            validBefore,
            id,
            uint8(signature[64]),
            bytes32(signature[0:32]),
            bytes32(signature[32:64])
        );
        emit Erc20Deposit(depositor, token, amount, id);
    }

    /// @notice Runs the calls of a request signed by the allocator, once, before it expires.
    function execute(CallRequest calldata request, bytes calldata signature)
        external
        returns (bytes32 id)
    {
        if (block.timestamp > request.expiration) revert CallRequestExpired(request.expiration);
        id = hashCallRequest(request);
        if (nonceUsed[request.nonce]) revert NonceAlreadyUsed(request.nonce);
        address signer = TypedSignatures.recover(TypedSignatures.digest(domainSeparator(), id), signature);
        if (signer == address(0) || signer != allocator) revert InvalidSignature();
        nonceUsed[request.nonce] = true;

        for (uint256 i = 0; i < request.calls.length; i++) {
            Call calldata call = request.calls[i];
            (bool ok, bytes memory returned) = call.to.call{value: call.value}(call.data);
            if (!ok && !call.allowFailure) revert CallFailed(i, returned);
            emit CallExecuted(id, call);
        }
    }

    function domainSeparator() public view returns (bytes32) {
        return TypedSignatures.domainSeparator(NAME_HASH, VERSION_HASH);
    }

    /// @notice EIP-712 hashStruct of a call request (what the allocator signs; its id in events).
    function hashCallRequest(CallRequest calldata request) public pure returns (bytes32) {
        bytes32[] memory callHashes = new bytes32[](request.calls.length);
        for (uint256 i = 0; i < request.calls.length; i++) {
            Call calldata call = request.calls[i];
            callHashes[i] = keccak256(
                abi.encode(CALL_TYPEHASH, call.to, keccak256(call.data), call.value, call.allowFailure)
            );
        }
        return keccak256(
            abi.encode(
                CALL_REQUEST_TYPEHASH,
                keccak256(abi.encodePacked(callHashes)),
                request.nonce,
                request.expiration
            )
        );
    }

    function _depositorOrSender(address depositor) private view returns (address) {
        return depositor == address(0) ? msg.sender : depositor;
    }
}
